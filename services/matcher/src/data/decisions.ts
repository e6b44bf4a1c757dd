import { MATCHING_RULES, type MatchingRule, type NewEvent, type Payment } from '@pmatch/contracts';
import {
  amountOf,
  asSql,
  modeOf,
  orderFields,
  orderView,
  recordEvents,
  statement,
  transactionFields,
  transactionView,
  type OrderRow,
  type SqlOrPrisma,
  type TransactionRow,
  unprefixed,
} from '@pmatch/db';
import { inboxClaimSql } from '@pmatch/platform';
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

export interface PendingDeposit {
  deposit: TransactionRow;
  /** How names are compared for this deposit: its organisation's rules for its mode. */
  nameMatcher: NameMatcher;
  /** Its amount candidates, as `findAmountCandidates` reads them. */
  candidates: AmountCandidates;
}

/** A message being processed: the inbox row that says so is written with the decision. */
export interface MessageClaim {
  consumer: string;
  messageId: string;
}

const readTransaction = statement('matcher.read_transaction', `SELECT ${transactionFields()} FROM transactions WHERE id = $1`);

/** A transaction as it now stands; it must exist. */
export async function findTransaction(tx: SqlOrPrisma, transactionId: string): Promise<TransactionRow> {
  const [row] = await asSql(tx).rows<TransactionRow>(readTransaction, [transactionId]);
  if (row === undefined) throw new Error(`transaction ${transactionId} does not exist`);
  return row;
}

/** The columns of an amount candidate: `CandidateRow`'s name for each column of `orders`. */
const CANDIDATE_COLUMNS = { id: 'id', seq: 'seq', status: 'status', payerName: 'payer_name', orderedAt: 'ordered_at', expiresAt: 'expires_at' } as const;

/**
 * The amount candidates of DESIGN "Matching decision" for an account, an amount and a time given
 * as SQL expressions (parameters, or a locked deposit's columns): every open order on the account
 * with the amount placed at or before the time (up to the cap and one more, to know the cap was
 * passed), and the most recent expired ones. Both halves walk orders_candidates_idx
 * (bank_account_id, amount, status, seq) in seq order and stop at their limit, so neither grows
 * with the expired orders a fixed-price shop piles up. The limits are in the text, not parameters,
 * so that a generic plan of the prepared statement knows them too.
 */
function amountCandidatesSql(account: string, amount: string, occurredAt: string): string {
  const columns = Object.entries(CANDIDATE_COLUMNS).map(([name, column]) => `${column} AS "${name}"`).join(', ');
  return `(SELECT ${columns} FROM orders
     WHERE bank_account_id = ${account} AND amount = ${amount} AND status = 'open' AND ordered_at <= ${occurredAt}
     ORDER BY seq LIMIT ${OPEN_CANDIDATE_CAP + 1})
   UNION ALL
   (SELECT ${columns} FROM orders
     WHERE bank_account_id = ${account} AND amount = ${amount} AND status = 'expired' AND ordered_at <= ${occurredAt}
     ORDER BY seq DESC LIMIT ${EXPIRED_CANDIDATE_LIMIT})`;
}

/** Parameters: bank account id, amount, occurred at. */
export const amountCandidates = statement('matcher.amount_candidates', amountCandidatesSql('$1', '$2', '$3'));

export interface AmountCandidates {
  /** Oldest first. */
  orders: CandidateOrder[];
  read: CandidateRead;
}

interface CandidateRow {
  id: string;
  seq: bigint;
  status: string;
  payerName: string;
  orderedAt: Date;
  expiresAt: Date;
}

function amountCandidatesFrom(rows: CandidateRow[]): AmountCandidates {
  const openRead = rows.filter((r) => r.status === 'open').length;
  const orders = [...rows]
    .sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
    .map((r): CandidateOrder => ({
      id: r.id,
      status: r.status as CandidateOrder['status'],
      payerName: r.payerName,
      orderedAt: r.orderedAt,
      expiresAt: r.expiresAt,
    }));
  return { orders, read: { allOpenOrdersRead: openRead <= OPEN_CANDIDATE_CAP } };
}

export async function findAmountCandidates(tx: SqlOrPrisma, bankAccountId: string, amount: bigint, occurredAt: Date): Promise<AmountCandidates> {
  return amountCandidatesFrom(await asSql(tx).rows<CandidateRow>(amountCandidates, [bankAccountId, amount, occurredAt]));
}

/** The candidate columns of a row of `claimAndLockPending`, under this prefix. */
const CANDIDATE = 'candidate.';

/** Parameters: transaction id, consumer, message id. */
export const claimAndLockPending = statement(
  'matcher.claim_and_lock_pending_deposit',
  `WITH claimed AS (${inboxClaimSql('$2', '$3')}),
   locked AS (
     SELECT t.*, s.matching_rules FROM transactions t
     LEFT JOIN settings s ON s.organisation_id = t.organisation_id AND s.mode = t.mode
     WHERE t.id = $1 AND t.status = 'pending' AND t.direction = 'deposit' AND EXISTS (SELECT FROM claimed)
     FOR UPDATE OF t)
   SELECT ${transactionFields('l', 'transaction.')}, l.matching_rules AS "matchingRules",
     ${Object.keys(CANDIDATE_COLUMNS).map((name) => `c."${name}" AS "${CANDIDATE}${name}"`).join(', ')}
   FROM locked l
   LEFT JOIN LATERAL (${amountCandidatesSql('l.bank_account_id', 'l.amount', 'l.occurred_at')}) c ON true`,
);

/**
 * Marks the message processed and, if it was new, locks the deposit if it is still pending and
 * reads it with its seller's matching rules and its amount candidates: one statement, where a
 * claim, a lock, a re-read and the candidates would be four round trips (one row per candidate,
 * or one without a candidate). Undefined when the message was processed before or the deposit is
 * not pending; either way there is nothing to decide. The inbox row commits or rolls back with
 * the caller's transaction, so a decision that fails leaves the message to be processed again.
 *
 * The candidates are read in the statement's snapshot, taken before the lock: an order committed
 * while the lock waited is not among them. The lock waits only while another transaction holds
 * the deposit's row: another decision, which the account's lock rules out, or for a moment the
 * sweep that asks again for deposits pending over a minute. An order committed meanwhile was
 * placed while the deposit was being decided, the late-order check's case whenever it commits.
 */
export async function lockPendingDeposit(tx: SqlOrPrisma, transactionId: string, claim: MessageClaim): Promise<PendingDeposit | undefined> {
  const rows = await asSql(tx).rows<Record<string, unknown>>(claimAndLockPending, [transactionId, claim.consumer, claim.messageId]);
  const deposit = rows[0] === undefined ? undefined : unprefixed<TransactionRow>(rows[0], 'transaction.');
  if (deposit === undefined) return undefined;
  const candidates = rows.flatMap((row) => unprefixed<CandidateRow>(row, CANDIDATE) ?? []);
  return { deposit, nameMatcher: nameMatcherOf(rows[0]!.matchingRules as string[] | null), candidates: amountCandidatesFrom(candidates) };
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

/** Parameter placeholders from `offset` on: `at(8)(1)` is `$9`, for statements made of several fragments. */
const at =
  (offset: number) =>
  (n: number): string =>
    `$${n + offset}`;

/**
 * One UPDATE for every expectation: a condition left out is passed as NULL and holds. Parameters
 * (from `p`): order id, statuses, account, amount, payer name (each NULL when not relied on), new
 * status, payment (JSON), now.
 */
function payOrderSql(p: (n: number) => string): string {
  return `UPDATE orders SET status = ${p(6)}, payment = ${p(7)}::jsonb, closed_at = ${p(8)}, updated_at = ${p(8)}
   WHERE id = ${p(1)} AND status = ANY(${p(2)}::text[])
     AND (${p(3)}::text IS NULL OR bank_account_id = ${p(3)})
     AND (${p(4)}::bigint IS NULL OR amount = ${p(4)})
     AND (${p(5)}::text IS NULL OR payer_name = ${p(5)})`;
}

const payOrderStatement = statement('matcher.pay_order', `${payOrderSql(at(0))} RETURNING ${orderFields()}`);

function payOrderValues(orderId: string, expected: PaidOrderExpectation, payment: Payment, status: 'paid' | 'paid_outside', now: Date): unknown[] {
  const { statuses, bankAccountId, amount, payerName } = expected;
  return [orderId, statuses, bankAccountId ?? null, amount ?? null, payerName ?? null, status, JSON.stringify(payment), now];
}

const notPayable = (orderId: string, expected: PaidOrderExpectation) => `order ${orderId} is no longer ${expected.statuses.join(' or ')} with what the decision saw`;

/** Marks an open (or expired) order paid, conditional on what the caller relied on. */
export async function payOrder(tx: SqlOrPrisma, orderId: string, expected: PaidOrderExpectation, payment: Payment, status: 'paid' | 'paid_outside', now: Date): Promise<OrderRow> {
  const rows = await asSql(tx).rows<OrderRow>(payOrderStatement, payOrderValues(orderId, expected, payment, status, now));
  return onlyRow(rows, notPayable(orderId, expected));
}

/** The row a conditional UPDATE … RETURNING changed; none means it changed since the caller read it. */
function onlyRow<T>(rows: T[], staleMessage: string): T {
  const [row] = rows;
  if (row === undefined) throw new StaleDecisionError(staleMessage);
  return row;
}

/**
 * Pays the order and confirms the deposit in one statement (a round trip fewer per decision). The
 * deposit is updated only if the order was, and the row says which of the two changed, so that a
 * stale one is reported as such; the caller's transaction then rolls the other back.
 * Parameters: `payOrderValues` ($1 to $8), then `depositStatusValues` ($9 to $15).
 */
const confirmDepositStatement = statement(
  'matcher.confirm_deposit',
  `WITH paid AS (${payOrderSql(at(0))} RETURNING *),
   confirmed AS (${setDepositStatusSql(at(8))} AND EXISTS (SELECT FROM paid) RETURNING *)
   SELECT ${orderFields('p', 'order.')}, ${transactionFields('c', 'transaction.')}
   FROM (SELECT 1) AS one LEFT JOIN paid p ON true LEFT JOIN confirmed c ON true`,
);

/**
 * Confirms a deposit for an order; the partial unique index refuses a second confirmed deposit.
 * The order must still have the deposit's account and amount, and `payerName` when given (the name
 * an automatic decision compared). Must run in a DB transaction: a refusal throws
 * StaleDecisionError, and the transaction's rollback takes back whatever half was written.
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
  const [row] = await asSql(tx).rows<Record<string, unknown>>(confirmDepositStatement, [
    ...payOrderValues(orderId, expected, payment, 'paid', now),
    ...depositStatusValues(deposit.id, from.depositStatuses, { status: 'confirmed', orderId, candidateOrderIds: [], decision: explanation }, now),
  ]);
  const order = unprefixed<OrderRow>(row!, 'order.');
  if (order === undefined) throw new StaleDecisionError(notPayable(orderId, expected));
  const transaction = unprefixed<TransactionRow>(row!, 'transaction.');
  if (transaction === undefined) throw new StaleDecisionError(notInStatus(deposit.id, from.depositStatuses));
  return { order, transaction };
}

/**
 * A new status with its order and candidates; with a decision (JSON), also the decision and
 * decided_at, which are otherwise kept. Parameters (from `p`): transaction id, statuses, status,
 * order id, candidate order ids, decision (or NULL), now.
 */
function setDepositStatusSql(p: (n: number) => string): string {
  return `UPDATE transactions SET status = ${p(3)}, order_id = ${p(4)}, candidate_order_ids = ${p(5)}::text[],
     decision = COALESCE(${p(6)}::jsonb, decision),
     decided_at = CASE WHEN ${p(6)}::jsonb IS NULL THEN decided_at ELSE ${p(7)}::timestamptz END,
     updated_at = ${p(7)}::timestamptz
   WHERE id = ${p(1)} AND status = ANY(${p(2)}::text[])`;
}

const setDepositStatusStatement = statement('matcher.set_deposit_status', `${setDepositStatusSql(at(0))} RETURNING ${transactionFields()}`);

interface DepositStatusChange {
  status: string;
  orderId: string | null;
  candidateOrderIds: string[];
  decision?: object;
}

function depositStatusValues(transactionId: string, fromStatuses: string[], to: DepositStatusChange, now: Date): unknown[] {
  return [transactionId, fromStatuses, to.status, to.orderId, to.candidateOrderIds, to.decision === undefined ? null : JSON.stringify(to.decision), now];
}

const notInStatus = (transactionId: string, fromStatuses: string[]) => `transaction ${transactionId} is no longer ${fromStatuses.join(' or ')}`;

export async function setDepositStatus(tx: SqlOrPrisma, transactionId: string, fromStatuses: string[], to: DepositStatusChange, now: Date): Promise<TransactionRow> {
  const rows = await asSql(tx).rows<TransactionRow>(setDepositStatusStatement, depositStatusValues(transactionId, fromStatuses, to, now));
  return onlyRow(rows, notInStatus(transactionId, fromStatuses));
}

export async function recordFor(tx: SqlOrPrisma, row: { organisationId: string; mode: string; bankAccountId: string }, now: Date, events: NewEvent[]): Promise<void> {
  await recordEvents(tx, { organisationId: row.organisationId, mode: modeOf(row), bankAccountId: row.bankAccountId, at: now }, events);
}

/**
 * Writes a decision on a new deposit and its events (transaction.deposited, then order.paid or
 * transaction.held) in the caller's DB transaction.
 */
export async function applyDecision(tx: SqlOrPrisma, deposit: TransactionRow, decision: Decision, ctx: ApplyContext): Promise<TransactionRow> {
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
