import type { NewEvent, Payment } from '@pmatch/contracts';
import { amountOf, eventAnnouncements, modeOf, orderObject, transactionObject, type LeasedMessage, type OrderRow, type TransactionRow } from '@pmatch/db';
import type { Decision } from '../domain/decide';
import { AUTOMATIC, depositPayment } from '../domain/payments';
import type { CandidateRow } from './candidates';
import type { MessageClaim, PendingDeposit } from './deposit-to-decide';

/** A pending deposit as `readDeposit` read it, with the decision made on it, to be written onto those rows. */
export interface DecidedDeposit {
  pending: PendingDeposit;
  decision: Decision;
  claim: MessageClaim;
  ctx: DecisionContext;
  /** The trace of the message that asked for the decision: its announcements carry it on. */
  traceparent?: string;
}

export interface DecisionContext {
  publicBaseUrl: string;
  now: Date;
  /** When the decision began, after the account's lock, before the read: the inbox row's time. */
  startedAt: Date;
}

/** What a decision writes: the deposit decided, the order paid (for a confirmation), the events and their announcements. */
export interface DecisionRows {
  decided: DecidedDeposit;
  paying: { order: CandidateRow; payment: Payment } | undefined;
  candidateOrderIds: string[];
  events: NewEvent[];
  eventIds: string[];
  announcements: LeasedMessage[];
}

/** A JSON column's value as Prisma types it. */
type StoredJson = NonNullable<TransactionRow['decision']>;

/** A value as it comes back from a jsonb column. */
const asStored = (value: object): StoredJson => JSON.parse(JSON.stringify(value)) as StoredJson;

/**
 * A decision's rows and events. The events' objects are made from the rows as read and the values
 * written, as the views would make them from the rows stored: the versions the write is
 * conditional on guarantee that no other column changed.
 */
export function decisionRows(decided: DecidedDeposit): DecisionRows {
  const { pending, decision, ctx } = decided;
  const { deposit } = pending;
  const { now } = ctx;
  const paying = paymentOf(pending, decision, now);
  const candidateOrderIds = decision.outcome === 'held' ? decision.candidateOrderIds : [];
  const decidedRow: TransactionRow = {
    ...deposit,
    status: decision.outcome,
    orderId: paying?.order.id ?? null,
    candidateOrderIds,
    decision: asStored(decision.explanation),
    decidedAt: now,
    updatedAt: now,
  };
  const paidOrder = paying && { ...paying.order, status: 'paid', payment: asStored(paying.payment), closedAt: now, updatedAt: now };
  const events = decisionEvents(decidedRow, paidOrder, decision, ctx.publicBaseUrl);
  const { ids, announcements } = eventAnnouncements({ organisationId: deposit.organisationId, mode: modeOf(deposit) }, events);
  const traced = decided.traceparent === undefined ? announcements : announcements.map((a) => ({ ...a, traceparent: decided.traceparent }));
  return { decided, paying, candidateOrderIds, events, eventIds: ids, announcements: traced };
}

/** For a confirmation, the order as read and the payment written onto it. */
function paymentOf(pending: PendingDeposit, decision: Decision, now: Date): DecisionRows['paying'] {
  if (decision.outcome !== 'confirmed') return undefined;
  const order = pending.candidates.rows.get(decision.orderId);
  if (order === undefined) throw new Error(`order ${decision.orderId} is not among the candidates read`);
  const { deposit } = pending;
  return { order, payment: depositPayment({ ...deposit, amount: amountOf(deposit.amount) }, AUTOMATIC(decision.reason), now) };
}

/** A new deposit's events: transaction.deposited, then order.paid or transaction.held. */
function decisionEvents(transaction: TransactionRow, paidOrder: Omit<OrderRow, 'seq'> | undefined, decision: Decision, publicBaseUrl: string): NewEvent[] {
  const events: NewEvent[] = [{ type: 'transaction.deposited', data: { object: transactionObject(transaction) } }];
  if (paidOrder !== undefined) events.push({ type: 'order.paid', data: { object: orderObject(paidOrder, publicBaseUrl) } });
  if (decision.outcome === 'held') {
    events.push({ type: 'transaction.held', data: { object: transactionObject(transaction), candidate_order_ids: decision.candidateOrderIds } });
  }
  return events;
}
