import { MATCHING_RULES, type MatchingRule, type NewEvent, type Payment } from '@pmatch/contracts';
import { Prisma, amountOf, modeOf, orderView, recordEvents, transactionView, type OrderRow, type Tx, type TransactionRow } from '@pmatch/db';
import type { CandidateOrder, CandidateRead, Decision, NameMatcher } from '../domain/decide';
import { nameMatcher } from '../domain/names/matcher';
import { AUTOMATIC, depositPayment, type PaymentSource } from '../domain/payments';

/**
 * The most open orders one decision reads. More open orders than this with one amount on one
 * account is a data problem: the deposit is held (`too_many_candidates`), never guessed.
 */
export const OPEN_CANDIDATE_CAP = 1000;
/**
 * Expired orders are kept for ever; a decision reads only the most recent ones, to hold a deposit
 * whose likeliest story is an expired order paid late.
 */
export const EXPIRED_CANDIDATE_LIMIT = 100;

/** A row of `transactions` as raw SQL returns it: column names, where Prisma has field names. */
interface TransactionColumns {
  id: string;
  seq: bigint;
  organisation_id: string;
  mode: string;
  bank_account_id: string;
  bank_reference: string;
  direction: string;
  status: string;
  amount: bigint;
  counterparty: string;
  occurred_at: Date;
  order_id: string | null;
  candidate_order_ids: string[];
  decision: Prisma.JsonValue | null;
  decided_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function transactionFromColumns(c: TransactionColumns): TransactionRow {
  return {
    id: c.id,
    seq: c.seq,
    organisationId: c.organisation_id,
    mode: c.mode,
    bankAccountId: c.bank_account_id,
    bankReference: c.bank_reference,
    direction: c.direction,
    status: c.status,
    amount: c.amount,
    counterparty: c.counterparty,
    occurredAt: c.occurred_at,
    orderId: c.order_id,
    candidateOrderIds: c.candidate_order_ids,
    decision: c.decision,
    decidedAt: c.decided_at,
    createdAt: c.created_at,
    updatedAt: c.updated_at,
  };
}

export interface PendingDeposit {
  deposit: TransactionRow;
  /** How names are compared for this deposit: its organisation's rules for its mode. */
  nameMatcher: NameMatcher;
}

/**
 * Locks a deposit that is still pending and reads it with its seller's matching rules, in one
 * statement (Prisma has no FOR UPDATE, and a lock followed by a re-read is two round trips).
 */
export async function lockPendingDeposit(tx: Tx, transactionId: string): Promise<PendingDeposit | undefined> {
  const rows = await tx.$queryRaw<(TransactionColumns & { matching_rules: string[] | null })[]>`
    SELECT t.*, s.matching_rules FROM transactions t
    LEFT JOIN settings s ON s.organisation_id = t.organisation_id AND s.mode = t.mode
    WHERE t.id = ${transactionId} AND t.status = 'pending' AND t.direction = 'deposit'
    FOR UPDATE OF t`;
  const row = rows[0];
  if (row === undefined) return undefined;
  const { matching_rules: rules, ...columns } = row;
  return { deposit: transactionFromColumns(columns), nameMatcher: nameMatcherOf(rules) };
}

/**
 * The amount candidates of DESIGN "Matching decision" as one statement: every open order on the
 * account with the amount placed at or before `occurredAt` (up to the cap and one more, to know
 * the cap was passed), and the most recent expired ones. Both halves walk orders_candidates_idx
 * (bank_account_id, amount, status, seq) in seq order and stop at their limit, so neither grows
 * with the expired orders a fixed-price shop piles up.
 */
export function amountCandidatesQuery(bankAccountId: string, amount: bigint, occurredAt: Date): Prisma.Sql {
  return Prisma.sql`
    (SELECT id, seq, status, payer_name, ordered_at, expires_at FROM orders
      WHERE bank_account_id = ${bankAccountId} AND amount = ${amount} AND status = 'open' AND ordered_at <= ${occurredAt}
      ORDER BY seq LIMIT ${OPEN_CANDIDATE_CAP + 1})
    UNION ALL
    (SELECT id, seq, status, payer_name, ordered_at, expires_at FROM orders
      WHERE bank_account_id = ${bankAccountId} AND amount = ${amount} AND status = 'expired' AND ordered_at <= ${occurredAt}
      ORDER BY seq DESC LIMIT ${EXPIRED_CANDIDATE_LIMIT})`;
}

export interface AmountCandidates {
  /** Oldest first. */
  orders: CandidateOrder[];
  read: CandidateRead;
}

export async function findAmountCandidates(tx: Tx, bankAccountId: string, amount: bigint, occurredAt: Date): Promise<AmountCandidates> {
  const rows = await tx.$queryRaw<{ id: string; seq: bigint; status: string; payer_name: string; ordered_at: Date; expires_at: Date }[]>(
    amountCandidatesQuery(bankAccountId, amount, occurredAt),
  );
  const openRead = rows.filter((r) => r.status === 'open').length;
  const orders = rows
    .sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
    .map((r): CandidateOrder => ({
      id: r.id,
      status: r.status as CandidateOrder['status'],
      payerName: r.payer_name,
      orderedAt: r.ordered_at,
      expiresAt: r.expires_at,
    }));
  return { orders, read: { allOpenOrdersRead: openRead <= OPEN_CANDIDATE_CAP } };
}

/** How names are compared under a seller's enabled rules (`settings.matching_rules`; none without a settings row). */
export function nameMatcherOf(matchingRules: string[] | null | undefined): NameMatcher {
  // The column is plain TEXT[]: a name this version does not know enables nothing.
  const rules = (matchingRules ?? []).filter((r): r is MatchingRule => (MATCHING_RULES as readonly string[]).includes(r));
  return nameMatcher(rules);
}

/** A conditional update found the row no longer in the state the decision was made on. */
export class StaleDecisionError extends Error {
  override name = 'StaleDecisionError';
}

export interface ApplyContext {
  publicBaseUrl: string;
  now: Date;
}

/**
 * What a payment relies on in the order row: its status, and for a deposit the account and amount
 * (and, for an automatic decision, the payer name the fit was found with). The UPDATE is
 * conditional on all of them, so a PATCH of the amount or payer name that commits between the
 * decision's read and this write makes it throw StaleDecisionError instead of paying the order with
 * a deposit of another amount.
 */
export interface PaidOrderExpectation {
  statuses: string[];
  bankAccountId?: string;
  amount?: bigint;
  payerName?: string;
}

/** Marks an open (or expired) order paid, conditional on what the caller relied on. */
export async function payOrder(tx: Tx, orderId: string, expected: PaidOrderExpectation, payment: Payment, status: 'paid' | 'paid_outside', now: Date): Promise<OrderRow> {
  const { statuses, bankAccountId, amount, payerName } = expected;
  return staleWhenNoRow(`order ${orderId} is no longer ${statuses.join(' or ')} with what the decision saw`, () =>
    tx.order.update({
      where: {
        id: orderId,
        status: { in: statuses },
        ...(bankAccountId === undefined ? {} : { bankAccountId }),
        ...(amount === undefined ? {} : { amount }),
        ...(payerName === undefined ? {} : { payerName }),
      },
      data: { status, payment: payment as unknown as Prisma.InputJsonValue, closedAt: now, updatedAt: now },
    }),
  );
}

/**
 * Runs a conditional `update` (one UPDATE … RETURNING). Prisma reports that no row matched the
 * condition as P2025; that means the row changed since the caller read it.
 */
async function staleWhenNoRow<T>(message: string, update: () => Promise<T>): Promise<T> {
  try {
    return await update();
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') throw new StaleDecisionError(message);
    throw error;
  }
}

/**
 * Confirms a deposit for an order; the partial unique index refuses a second confirmed deposit.
 * The order must still have the deposit's account and amount, and `payerName` when given (the name
 * an automatic decision compared).
 */
export async function confirmDeposit(
  tx: Tx,
  deposit: TransactionRow,
  orderId: string,
  source: PaymentSource,
  from: { depositStatuses: string[]; orderStatuses: string[]; payerName?: string },
  explanation: object,
  now: Date,
): Promise<{ order: OrderRow; transaction: TransactionRow }> {
  const payment = depositPayment({ ...deposit, amount: amountOf(deposit.amount) }, source, now);
  const order = await payOrder(
    tx,
    orderId,
    { statuses: from.orderStatuses, bankAccountId: deposit.bankAccountId, amount: deposit.amount, ...(from.payerName === undefined ? {} : { payerName: from.payerName }) },
    payment,
    'paid',
    now,
  );
  const transaction = await setDepositStatus(
    tx,
    deposit.id,
    from.depositStatuses,
    { status: 'confirmed', orderId, candidateOrderIds: [], decision: explanation },
    now,
  );
  return { order, transaction };
}

export async function setDepositStatus(
  tx: Tx,
  transactionId: string,
  fromStatuses: string[],
  to: { status: string; orderId: string | null; candidateOrderIds: string[]; decision?: object },
  now: Date,
): Promise<TransactionRow> {
  return staleWhenNoRow(`transaction ${transactionId} is no longer ${fromStatuses.join(' or ')}`, () =>
    tx.transaction.update({
      where: { id: transactionId, status: { in: fromStatuses } },
      data: {
        status: to.status,
        orderId: to.orderId,
        candidateOrderIds: to.candidateOrderIds,
        ...(to.decision === undefined ? {} : { decision: to.decision as Prisma.InputJsonValue, decidedAt: now }),
        updatedAt: now,
      },
    }),
  );
}

export async function recordFor(tx: Tx, row: { organisationId: string; mode: string; bankAccountId: string }, now: Date, events: NewEvent[]): Promise<void> {
  await recordEvents(tx, { organisationId: row.organisationId, mode: modeOf(row), bankAccountId: row.bankAccountId, at: now }, events);
}

/**
 * Writes a decision on a new deposit and its events (transaction.deposited, then order.paid or
 * transaction.held) in the caller's DB transaction.
 */
export async function applyDecision(tx: Tx, deposit: TransactionRow, decision: Decision, ctx: ApplyContext): Promise<TransactionRow> {
  const events: NewEvent[] = [];
  let transaction: TransactionRow;
  let paidOrder: OrderRow | undefined;
  if (decision.outcome === 'confirmed') {
    ({ order: paidOrder, transaction } = await confirmDeposit(
      tx,
      deposit,
      decision.orderId,
      AUTOMATIC(decision.reason),
      { depositStatuses: ['pending'], orderStatuses: ['open'], payerName: decision.payerName },
      decision.explanation,
      ctx.now,
    ));
  } else {
    transaction = await setDepositStatus(
      tx,
      deposit.id,
      ['pending'],
      { status: decision.outcome, orderId: null, candidateOrderIds: decision.outcome === 'held' ? decision.candidateOrderIds : [], decision: decision.explanation },
      ctx.now,
    );
  }
  events.push({ type: 'transaction.deposited', data: { object: transactionView(transaction) } });
  if (paidOrder !== undefined) events.push({ type: 'order.paid', data: { object: orderView(paidOrder, ctx.publicBaseUrl) } });
  if (decision.outcome === 'held') {
    events.push({ type: 'transaction.held', data: { object: transactionView(transaction), candidate_order_ids: decision.candidateOrderIds } });
  }
  await recordFor(tx, deposit, ctx.now, events);
  return transaction;
}
