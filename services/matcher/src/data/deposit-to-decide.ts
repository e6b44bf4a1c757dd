import { MATCHING_RULES, type MatchingRule } from '@pmatch/contracts';
import { asSql, sql, preparedQuery, transactionFields, unprefixed, type Row, type SqlOrPrisma, type TransactionRow } from '@pmatch/db';
import { OutOfScopeError } from '@pmatch/platform';
import { amountCandidatesFrom, amountCandidatesQuery, type AmountCandidates, type CandidateRow } from './candidates';

/** A deposit the matcher may decide, as one statement read it with what the decision needs. */
export interface PendingDeposit {
  deposit: TransactionRow;
  /** The deposit row's version as read (`xmin`): the decision is written onto that version only. */
  version: string;
  /** Its organisation's matching rules for its mode. */
  rules: MatchingRule[];
  candidates: AmountCandidates;
}

/** A message being processed: the inbox row that says so is written with the decision. */
export interface MessageClaim {
  consumer: string;
  messageId: string;
}

/** The candidate columns of a row of `readDepositsQuery`, under this prefix. */
const CANDIDATE = 'candidate.';

/** One message asking for a deposit's decision: the transaction it names and its inbox claim. */
export interface DepositAsked {
  transactionId: string;
  claim: MessageClaim;
}

/** What `readDeposits` read for one message: the transaction, and what deciding it needs if it is to be decided. */
export interface DepositRead {
  transaction: TransactionRow;
  pending?: PendingDeposit;
}

/**
 * Each named deposit is to be decided if it is a pending deposit and its message new; only then
 * are its candidates read. Rows carry the `item` (from 1) of the message they answer.
 */
export const readDepositsQuery = preparedQuery<{ transactionId: string[]; consumer: string[]; messageId: string[] }, Row>(
  'matcher.read_deposits_to_decide',
  (p) => sql`WITH asked AS (
     SELECT * FROM unnest(${p.transactionId}::text[], ${p.consumer}::text[], ${p.messageId}::text[]) WITH ORDINALITY AS a(transaction_id, consumer, message_id, item)),
   deposit AS (
     SELECT a.item, t.*, t.xmin::text AS version, s.matching_rules,
       t.status = 'pending' AND t.direction = 'deposit'
         AND NOT EXISTS (SELECT FROM inbox i WHERE i.consumer = a.consumer AND i.message_id = a.message_id) AS to_decide
     FROM asked a
     JOIN transactions t ON t.id = a.transaction_id
     LEFT JOIN settings s ON s.organisation_id = t.organisation_id AND s.mode = t.mode)
   SELECT d.item::int AS "item", ${transactionFields('d', 'transaction.')}, d.version AS "version", d.matching_rules AS "matchingRules", d.to_decide AS "toDecide", c.*
   FROM deposit d
   LEFT JOIN LATERAL (${amountCandidatesQuery({ account: 'd.bank_account_id', amount: 'd.amount', occurredAt: 'd.occurred_at' }, CANDIDATE)}) c ON d.to_decide`,
);

/**
 * Reads the deposits the messages name and, for each that is pending and whose message is new,
 * its seller's matching rules and amount candidates: one statement, one snapshot, no lock. One
 * answer per message, in order: undefined for a transaction that does not exist; `pending`
 * undefined when there is nothing to decide. An order committed after the read is the late-order
 * check's to see, which waits for the account's lock, so for these decisions to be written.
 */
export async function readDeposits(db: SqlOrPrisma, asked: readonly DepositAsked[]): Promise<(DepositRead | undefined)[]> {
  const rows = await asSql(db).rows(readDepositsQuery, {
    transactionId: asked.map((a) => a.transactionId),
    consumer: asked.map((a) => a.claim.consumer),
    messageId: asked.map((a) => a.claim.messageId),
  });
  const rowsOf = new Map<number, Row[]>();
  for (const row of rows) {
    const item = row.item as number;
    const ofItem = rowsOf.get(item);
    if (ofItem === undefined) rowsOf.set(item, [row]);
    else ofItem.push(row);
  }
  return asked.map((_, i) => depositRead(rowsOf.get(i + 1) ?? []));
}

function depositRead(rows: Row[]): DepositRead | undefined {
  const first = rows[0];
  const transaction = first === undefined ? undefined : unprefixed<TransactionRow>(first, 'transaction.');
  if (first === undefined || transaction === undefined) return undefined;
  if (first.toDecide !== true) return { transaction };
  const candidates = rows.flatMap((row) => unprefixed<CandidateRow>(row, CANDIDATE) ?? []);
  return {
    transaction,
    pending: {
      deposit: transaction,
      version: first.version as string,
      rules: enabledRules(first.matchingRules as string[] | null),
      candidates: amountCandidatesFrom(candidates),
    },
  };
}

/** `readDeposits` for one message; OutOfScopeError if the transaction does not exist. */
export async function readDeposit(db: SqlOrPrisma, transactionId: string, claim: MessageClaim): Promise<DepositRead> {
  const [read] = await readDeposits(db, [{ transactionId, claim }]);
  if (read === undefined) throw new OutOfScopeError(`transaction ${transactionId} does not exist`);
  return read;
}

/** A seller's enabled rules (`settings.matching_rules`; none without a settings row). */
export function enabledRules(matchingRules: string[] | null | undefined): MatchingRule[] {
  // The column is plain TEXT[]: a name this version does not know enables nothing.
  return (matchingRules ?? []).filter((r): r is MatchingRule => (MATCHING_RULES as readonly string[]).includes(r));
}
