import { asSql, orderFields, sql, preparedQuery, type OrderRow, type SqlOrPrisma, type SqlPart, type SqlText } from '@pmatch/db';
import type { CandidateOrder, CandidateRead } from '../domain/decide';

/**
 * The most open orders one decision reads. More open orders than this with one amount on one
 * account is a data problem: the deposit is held (`too_many_candidates`), never guessed.
 */
export const OPEN_CANDIDATE_CAP = 1000;
/** Of the expired orders, kept for ever, a decision reads the most recent: a late payment's likeliest story. */
export const EXPIRED_CANDIDATE_LIMIT = 100;

/** An amount candidate's row as read, and its version (`xmin`). */
export interface CandidateRow extends OrderRow {
  version: string;
}

export interface AmountCandidates {
  /** Oldest first. */
  orders: CandidateOrder[];
  read: CandidateRead;
  /** Each candidate's row, by order id: what a payment of it is written onto. */
  rows: ReadonlyMap<string, CandidateRow>;
}

/**
 * The amount candidates of a deposit: the open orders of its account and amount placed at or
 * before it (up to the cap and one more) and the latest expired ones, each with its version,
 * columns named with `namePrefix`. Both halves walk orders_candidates_idx in seq order; the limits
 * are in the text so that a generic plan knows them (docs/decisions/0016-queue-statements-find-rows-by-key.md).
 */
export function amountCandidatesQuery(deposit: { account: SqlPart; amount: SqlPart; occurredAt: SqlPart }, namePrefix = ''): SqlText {
  const { account, amount, occurredAt } = deposit;
  const columns = `${orderFields(undefined, namePrefix)}, xmin::text AS "${namePrefix}version"`;
  return sql`(SELECT ${columns} FROM orders
     WHERE bank_account_id = ${account} AND amount = ${amount} AND status = 'open' AND ordered_at <= ${occurredAt}
     ORDER BY seq LIMIT ${OPEN_CANDIDATE_CAP + 1})
   UNION ALL
   (SELECT ${columns} FROM orders
     WHERE bank_account_id = ${account} AND amount = ${amount} AND status = 'expired' AND ordered_at <= ${occurredAt}
     ORDER BY seq DESC LIMIT ${EXPIRED_CANDIDATE_LIMIT})`;
}

export const readAmountCandidates = preparedQuery<{ bankAccountId: string; amount: bigint; occurredAt: Date }, CandidateRow>('matcher.amount_candidates', (p) =>
  amountCandidatesQuery({ account: p.bankAccountId, amount: p.amount, occurredAt: p.occurredAt }),
);

export function amountCandidatesFrom(rows: CandidateRow[]): AmountCandidates {
  const openRead = rows.filter((r) => r.status === 'open').length;
  const oldestFirst = [...rows].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  const orders = oldestFirst.map((r): CandidateOrder => ({
    id: r.id,
    status: r.status as CandidateOrder['status'],
    payerName: r.payerName,
    orderedAt: r.orderedAt,
    expiresAt: r.expiresAt,
    transferCode: r.transferCode,
  }));
  return { orders, read: { allOpenOrdersRead: openRead <= OPEN_CANDIDATE_CAP }, rows: new Map(oldestFirst.map((r) => [r.id, r])) };
}

export async function findAmountCandidates(tx: SqlOrPrisma, bankAccountId: string, amount: bigint, occurredAt: Date): Promise<AmountCandidates> {
  return amountCandidatesFrom(await asSql(tx).rows(readAmountCandidates, { bankAccountId, amount, occurredAt }));
}
