import { MATCHING_RULES, type MatchingRule, type NewEvent, type Payment } from '@pmatch/contracts';
import { amountOf, modeOf, orderView, recordEvents, transactionView, type OrderRow, type Prisma, type Tx, type TransactionRow } from '@pmatch/db';
import type { CandidateOrder, Decision, NameMatcher } from '../domain/decide';
import { nameMatcher } from '../domain/names/matcher';
import { AUTOMATIC, depositPayment, type PaymentSource } from '../domain/payments';

/** The most orders one decision reads; more than this with one amount on one account is a data problem. */
const CANDIDATE_READ_LIMIT = 1000;

export async function lockPendingDeposit(tx: Tx, transactionId: string): Promise<TransactionRow | undefined> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM transactions WHERE id = ${transactionId} AND status = 'pending' AND direction = 'deposit' FOR UPDATE`;
  if (rows.length === 0) return undefined;
  return tx.transaction.findUniqueOrThrow({ where: { id: transactionId } });
}

export async function findAmountCandidates(tx: Tx, bankAccountId: string, amount: bigint): Promise<CandidateOrder[]> {
  const rows = await tx.order.findMany({
    where: { bankAccountId, amount, status: { in: ['open', 'expired'] } },
    orderBy: { seq: 'asc' },
    take: CANDIDATE_READ_LIMIT,
    select: { id: true, status: true, payerName: true, orderedAt: true, expiresAt: true },
  });
  return rows.map((r) => ({ ...r, status: r.status as CandidateOrder['status'] }));
}

/** How names are compared for this deposit's organisation and mode: the seller's enabled rules. */
export async function nameMatcherFor(tx: Tx, deposit: TransactionRow): Promise<NameMatcher> {
  const settings = await tx.setting.findUnique({
    where: { organisationId_mode: { organisationId: deposit.organisationId, mode: deposit.mode } },
    select: { matchingRules: true },
  });
  // The column is plain TEXT[]: a name this version does not know enables nothing.
  const rules = (settings?.matchingRules ?? []).filter((r): r is MatchingRule => (MATCHING_RULES as readonly string[]).includes(r));
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
 * Marks an open (or expired) order paid. Conditional on the status the caller saw: a concurrent
 * change makes it throw StaleDecisionError instead of paying twice.
 */
export async function payOrder(tx: Tx, orderId: string, fromStatuses: string[], payment: Payment, status: 'paid' | 'paid_outside', now: Date): Promise<OrderRow> {
  const paid = await tx.order.updateMany({
    where: { id: orderId, status: { in: fromStatuses } },
    data: { status, payment: payment as unknown as Prisma.InputJsonValue, closedAt: now, updatedAt: now },
  });
  if (paid.count !== 1) throw new StaleDecisionError(`order ${orderId} is no longer ${fromStatuses.join(' or ')}`);
  return tx.order.findUniqueOrThrow({ where: { id: orderId } });
}

/** Confirms a deposit for an order; the partial unique index refuses a second confirmed deposit. */
export async function confirmDeposit(
  tx: Tx,
  deposit: TransactionRow,
  orderId: string,
  source: PaymentSource,
  from: { depositStatuses: string[]; orderStatuses: string[] },
  explanation: object,
  now: Date,
): Promise<{ order: OrderRow; transaction: TransactionRow }> {
  const payment = depositPayment({ ...deposit, amount: amountOf(deposit.amount) }, source, now);
  const order = await payOrder(tx, orderId, from.orderStatuses, payment, 'paid', now);
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
  const updated = await tx.transaction.updateMany({
    where: { id: transactionId, status: { in: fromStatuses } },
    data: {
      status: to.status,
      orderId: to.orderId,
      candidateOrderIds: to.candidateOrderIds,
      ...(to.decision === undefined ? {} : { decision: to.decision as Prisma.InputJsonValue, decidedAt: now }),
      updatedAt: now,
    },
  });
  if (updated.count !== 1) throw new StaleDecisionError(`transaction ${transactionId} is no longer ${fromStatuses.join(' or ')}`);
  return tx.transaction.findUniqueOrThrow({ where: { id: transactionId } });
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
      { depositStatuses: ['pending'], orderStatuses: ['open'] },
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
