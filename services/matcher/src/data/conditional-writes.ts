import type { NewEvent, Payment } from '@pmatch/contracts';
import {
  amountOf,
  asSql,
  modeOf,
  orderFields,
  recordEvents,
  sql,
  preparedQuery,
  transactionFields,
  unprefixed,
  type OrderRow,
  type Placeholders,
  type Row,
  type SqlOrPrisma,
  type SqlText,
  type TransactionRow,
} from '@pmatch/db';
import { depositPayment, type PaymentSource } from '../domain/payments';

/** A conditional update found the row no longer in the state the decision was made on. */
export class StaleDecisionError extends Error {
  override name = 'StaleDecisionError';
}

/**
 * What a payment relies on in the order row: its status and, for a deposit, the account, amount
 * and (for an automatic decision) the payer name. The UPDATE is conditional on all of them, so a
 * PATCH committed since the read makes it throw StaleDecisionError instead of paying the order
 * with a deposit of another amount.
 */
export interface PaidOrderExpectation {
  statuses: string[];
  bankAccountId?: string;
  amount?: bigint;
  payerName?: string;
}

/** The parameters of `payOrderUpdate`: a condition left out is NULL, and holds. */
interface PayOrderValues {
  orderId: string;
  orderStatuses: string[];
  bankAccountId: string | null;
  amount: bigint | null;
  payerName: string | null;
  paidStatus: 'paid' | 'paid_outside';
  payment: string;
  now: Date;
}

function payOrderUpdate(p: Placeholders<PayOrderValues>): SqlText {
  return sql`UPDATE orders SET status = ${p.paidStatus}, payment = ${p.payment}::jsonb, closed_at = ${p.now}, updated_at = ${p.now}
   WHERE id = ${p.orderId} AND status = ANY(${p.orderStatuses}::text[])
     AND (${p.bankAccountId}::text IS NULL OR bank_account_id = ${p.bankAccountId})
     AND (${p.amount}::bigint IS NULL OR amount = ${p.amount})
     AND (${p.payerName}::text IS NULL OR payer_name = ${p.payerName})`;
}

const payOrderQuery = preparedQuery<PayOrderValues, OrderRow>('matcher.pay_order', (p) => sql`${payOrderUpdate(p)} RETURNING ${orderFields()}`);

function payOrderValues(orderId: string, expected: PaidOrderExpectation, payment: Payment, paidStatus: 'paid' | 'paid_outside', now: Date): PayOrderValues {
  const { statuses, bankAccountId, amount, payerName } = expected;
  return {
    orderId,
    orderStatuses: statuses,
    bankAccountId: bankAccountId ?? null,
    amount: amount ?? null,
    payerName: payerName ?? null,
    paidStatus,
    payment: JSON.stringify(payment),
    now,
  };
}

const notPayable = (orderId: string, expected: PaidOrderExpectation) =>
  `order ${orderId} is no longer ${expected.statuses.join(' or ')} with what the decision saw`;

/** Marks an open (or expired) order paid, conditional on what the caller relied on. */
export async function payOrder(
  tx: SqlOrPrisma,
  orderId: string,
  expected: PaidOrderExpectation,
  payment: Payment,
  status: 'paid' | 'paid_outside',
  now: Date,
): Promise<OrderRow> {
  const rows = await asSql(tx).rows(payOrderQuery, payOrderValues(orderId, expected, payment, status, now));
  return onlyRow(rows, notPayable(orderId, expected));
}

/** The row a conditional UPDATE … RETURNING changed; none means it changed since the caller read it. */
function onlyRow<T>(rows: T[], staleMessage: string): T {
  const [row] = rows;
  if (row === undefined) throw new StaleDecisionError(staleMessage);
  return row;
}

/** A deposit's new status with its order and candidates; with a decision, also the decision and decided_at. */
export interface DepositStatusChange {
  status: string;
  orderId: string | null;
  candidateOrderIds: string[];
  decision?: object;
}

/** The parameters of `depositStatusUpdate`; a NULL decision keeps the one stored. */
interface DepositStatusValues {
  transactionId: string;
  depositStatuses: string[];
  depositStatus: string;
  orderId: string | null;
  candidateOrderIds: string[];
  decision: string | null;
  now: Date;
}

function depositStatusUpdate(p: Placeholders<DepositStatusValues>): SqlText {
  return sql`UPDATE transactions SET status = ${p.depositStatus}, order_id = ${p.orderId}, candidate_order_ids = ${p.candidateOrderIds}::text[],
     decision = COALESCE(${p.decision}::jsonb, decision),
     decided_at = CASE WHEN ${p.decision}::jsonb IS NULL THEN decided_at ELSE ${p.now}::timestamptz END,
     updated_at = ${p.now}::timestamptz
   WHERE id = ${p.transactionId} AND status = ANY(${p.depositStatuses}::text[])`;
}

const setDepositStatusQuery = preparedQuery<DepositStatusValues, TransactionRow>(
  'matcher.set_deposit_status',
  (p) => sql`${depositStatusUpdate(p)} RETURNING ${transactionFields()}`,
);

function depositStatusValues(transactionId: string, fromStatuses: string[], to: DepositStatusChange, now: Date): DepositStatusValues {
  const decision = to.decision === undefined ? null : JSON.stringify(to.decision);
  return {
    transactionId,
    depositStatuses: fromStatuses,
    depositStatus: to.status,
    orderId: to.orderId,
    candidateOrderIds: to.candidateOrderIds,
    decision,
    now,
  };
}

const notInStatus = (transactionId: string, fromStatuses: string[]) => `transaction ${transactionId} is no longer ${fromStatuses.join(' or ')}`;

/** Changes a deposit's status, conditional on its being in one of `fromStatuses`. */
export async function setDepositStatus(
  tx: SqlOrPrisma,
  transactionId: string,
  fromStatuses: string[],
  to: DepositStatusChange,
  now: Date,
): Promise<TransactionRow> {
  const rows = await asSql(tx).rows(setDepositStatusQuery, depositStatusValues(transactionId, fromStatuses, to, now));
  return onlyRow(rows, notInStatus(transactionId, fromStatuses));
}

/**
 * Pays the order and confirms the deposit in one statement. The deposit is updated only if the
 * order was, and the row says which of the two changed, so that a stale one is reported as such;
 * the caller's transaction then rolls the other back.
 */
const confirmDepositQuery = preparedQuery<PayOrderValues & DepositStatusValues, Row>(
  'matcher.confirm_deposit',
  (p) => sql`WITH paid AS (${payOrderUpdate(p)} RETURNING *),
   confirmed AS (${depositStatusUpdate(p)} AND EXISTS (SELECT FROM paid) RETURNING *)
   SELECT ${orderFields('p', 'order.')}, ${transactionFields('c', 'transaction.')}
   FROM (SELECT 1) AS one LEFT JOIN paid p ON true LEFT JOIN confirmed c ON true`,
);

/**
 * Confirms a deposit for an order that still has the deposit's account and amount, and
 * `payerName` when given (the name an automatic decision compared); the partial unique index
 * refuses a second confirmed deposit. Must run in a DB transaction: a refusal throws
 * StaleDecisionError, and the rollback takes back whatever half was written.
 */
export async function confirmDeposit(
  tx: SqlOrPrisma,
  deposit: TransactionRow,
  orderId: string,
  source: PaymentSource,
  from: { depositStatuses: string[]; orderStatuses: string[]; payerName?: string },
  explanation: object,
  now: Date,
): Promise<{ order: OrderRow; transaction: TransactionRow }> {
  const payment = depositPayment({ ...deposit, amount: amountOf(deposit.amount) }, source, now);
  const expected: PaidOrderExpectation = {
    statuses: from.orderStatuses,
    bankAccountId: deposit.bankAccountId,
    amount: deposit.amount,
    ...(from.payerName === undefined ? {} : { payerName: from.payerName }),
  };
  const [row] = await asSql(tx).rows(confirmDepositQuery, {
    ...payOrderValues(orderId, expected, payment, 'paid', now),
    ...depositStatusValues(deposit.id, from.depositStatuses, { status: 'confirmed', orderId, candidateOrderIds: [], decision: explanation }, now),
  });
  const order = unprefixed<OrderRow>(row!, 'order.');
  if (order === undefined) throw new StaleDecisionError(notPayable(orderId, expected));
  const transaction = unprefixed<TransactionRow>(row!, 'transaction.');
  if (transaction === undefined) throw new StaleDecisionError(notInStatus(deposit.id, from.depositStatuses));
  return { order, transaction };
}

/** Records events of an order's or a deposit's organisation, mode and account, in the caller's transaction. */
export async function recordEventsFor(
  tx: SqlOrPrisma,
  row: { organisationId: string; mode: string; bankAccountId: string },
  now: Date,
  events: NewEvent[],
): Promise<void> {
  await recordEvents(tx, { organisationId: row.organisationId, mode: modeOf(row), bankAccountId: row.bankAccountId, at: now }, events);
}
