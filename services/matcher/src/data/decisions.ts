import { MATCHING_RULES, type MatchingRule, type NewEvent, type Payment } from '@pmatch/contracts';
import {
  amountOf,
  asSql,
  eventAnnouncements,
  modeOf,
  orderFields,
  orderView,
  outboxInsert,
  outboxParameters,
  recordEvents,
  statement,
  transactionFields,
  transactionView,
  type OrderRow,
  type OutboxHandOver,
  type Sql,
  type SqlOrPrisma,
  type TransactionRow,
  unprefixed,
} from '@pmatch/db';
import { BatchWriter, inboxClaimSql } from '@pmatch/platform';
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

/** A deposit the matcher may decide, as one statement read it with what the decision needs. */
export interface PendingDeposit {
  deposit: TransactionRow;
  /** The deposit row's version as read (`xmin`): the decision is written onto that version only. */
  version: string;
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

/**
 * The amount candidates of DESIGN "Matching decision" for an account, an amount and a time given
 * as SQL expressions (parameters, or a deposit's columns): every open order on the account with
 * the amount placed at or before the time (up to the cap and one more, to know the cap was
 * passed), and the most recent expired ones, each with its row's version (`xmin`). Both halves
 * walk orders_candidates_idx (bank_account_id, amount, status, seq) in seq order and stop at their
 * limit, so neither grows with the expired orders a fixed-price shop piles up. The limits are in
 * the text, not parameters, so that a generic plan of the prepared statement knows them too.
 */
export function amountCandidatesSql(account: string, amount: string, occurredAt: string, namePrefix = ''): string {
  const columns = `${orderFields(undefined, namePrefix)}, xmin::text AS "${namePrefix}version"`;
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

/** An amount candidate's row as read, and its version. */
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

export function amountCandidatesFrom(rows: CandidateRow[]): AmountCandidates {
  const openRead = rows.filter((r) => r.status === 'open').length;
  const oldestFirst = [...rows].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  const orders = oldestFirst.map(
    (r): CandidateOrder => ({ id: r.id, status: r.status as CandidateOrder['status'], payerName: r.payerName, orderedAt: r.orderedAt, expiresAt: r.expiresAt }),
  );
  return { orders, read: { allOpenOrdersRead: openRead <= OPEN_CANDIDATE_CAP }, rows: new Map(oldestFirst.map((r) => [r.id, r])) };
}

export async function findAmountCandidates(tx: SqlOrPrisma, bankAccountId: string, amount: bigint, occurredAt: Date): Promise<AmountCandidates> {
  return amountCandidatesFrom(await asSql(tx).rows<CandidateRow>(amountCandidates, [bankAccountId, amount, occurredAt]));
}

/** The candidate columns of a row of `readDepositToDecide`, under this prefix. */
const CANDIDATE = 'candidate.';

/**
 * Parameters: transaction id, consumer, message id. The deposit is to be decided if it is a
 * pending deposit and the message is new; only then are its candidates read.
 */
export const readDepositToDecide = statement(
  'matcher.read_deposit_to_decide',
  `WITH deposit AS (
     SELECT t.*, t.xmin::text AS version, s.matching_rules,
       t.status = 'pending' AND t.direction = 'deposit'
         AND NOT EXISTS (SELECT FROM inbox i WHERE i.consumer = $2 AND i.message_id = $3) AS to_decide
     FROM transactions t
     LEFT JOIN settings s ON s.organisation_id = t.organisation_id AND s.mode = t.mode
     WHERE t.id = $1)
   SELECT ${transactionFields('d', 'transaction.')}, d.version AS "version", d.matching_rules AS "matchingRules", d.to_decide AS "toDecide", c.*
   FROM deposit d
   LEFT JOIN LATERAL (${amountCandidatesSql('d.bank_account_id', 'd.amount', 'd.occurred_at', CANDIDATE)}) c ON d.to_decide`,
);

/**
 * Reads a deposit and, if it is pending and the message new, its seller's matching rules and its
 * amount candidates: one statement, so one snapshot, and no lock. Nothing is written: the decision
 * is written by `writeDecisions` onto the rows as read here, or not at all. `pending` is undefined
 * when there is nothing to decide (the message was processed before, or the deposit was decided or
 * is a withdrawal); `transaction` is the row as it stands. The transaction must exist.
 *
 * An order committed after the read is not among the candidates: it was placed while the deposit
 * was being decided, the late-order check's case (which waits for the account's lock, so for this
 * decision to be written).
 */
export async function readDeposit(sql: SqlOrPrisma, transactionId: string, claim: MessageClaim): Promise<{ transaction: TransactionRow; pending?: PendingDeposit }> {
  const rows = await asSql(sql).rows<Record<string, unknown>>(readDepositToDecide, [transactionId, claim.consumer, claim.messageId]);
  const transaction = rows[0] === undefined ? undefined : unprefixed<TransactionRow>(rows[0], 'transaction.');
  if (transaction === undefined) throw new Error(`transaction ${transactionId} does not exist`);
  const first = rows[0]!;
  if (first.toDecide !== true) return { transaction };
  const candidates = rows.flatMap((row) => unprefixed<CandidateRow>(row, CANDIDATE) ?? []);
  return {
    transaction,
    pending: { deposit: transaction, version: first.version as string, nameMatcher: nameMatcherOf(first.matchingRules as string[] | null), candidates: amountCandidatesFrom(candidates) },
  };
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

/** A new deposit's events: transaction.deposited, then order.paid or transaction.held. */
function decisionEvents(transaction: TransactionRow, paidOrder: Omit<OrderRow, 'seq'> | undefined, decision: Decision, publicBaseUrl: string): NewEvent[] {
  const events: NewEvent[] = [{ type: 'transaction.deposited', data: { object: transactionView(transaction) } }];
  if (paidOrder !== undefined) events.push({ type: 'order.paid', data: { object: orderView(paidOrder, publicBaseUrl) } });
  if (decision.outcome === 'held') {
    events.push({ type: 'transaction.held', data: { object: transactionView(transaction), candidate_order_ids: decision.candidateOrderIds } });
  }
  return events;
}

/** A JSON column's value as Prisma types it. */
type StoredJson = NonNullable<TransactionRow['decision']>;

/** A value as it comes back from a jsonb column. */
const asStored = (value: object): StoredJson => JSON.parse(JSON.stringify(value)) as StoredJson;

/**
 * The decisions of new deposits as one statement, atomic without a transaction around it: for each
 * decision, the order paid (for a confirmation), the deposit decided, the inbox row of the message,
 * the events and their outbox rows. Each decision's writes are conditional on its deposit and its
 * order being the versions the decision read (`xmin`), the deposit still pending and the order
 * still open; a decision whose rows are not is left out, written nothing, and the others are
 * written. `decision_written_whole` fails the statement, and with it every row written, if a
 * concurrent change let an order be paid but not its deposit decided.
 *
 * The decisions come as parallel arrays, one element each, numbered from 1 in the order given
 * (`item`): $1 to $17 (see `decisionsParameters`). Their events come flattened, each with the
 * number of its decision ($18 to $21), and the outbox rows announcing them as `outboxInsert` takes
 * them ($22 to $25): an announcement's message id is the id of its first event, which is how it is
 * left out with its decision; they are inserted leased, for the relay to publish without claiming
 * them (`writeDecisions` hands them over). The statuses the rows must still have (the deposit
 * pending, the order open) come as parameters too, beside the versions: as constants in the text,
 * they would let a generic plan find the deposit through `transactions_pending_idx`, reading every
 * entry of it, since that index is near empty when the plan is made and holds the whole backlog
 * under a rush. Inbox rows go in key order, so that two matchers' batches cannot deadlock on them; orders
 * and deposits need no such care, as each decision holds its account's lock (and a deadlock,
 * should the lock have been lost, fails the batch, which is then written again decision by
 * decision).
 */
export const writeDecisionsStatement = statement(
  'matcher.write_decisions',
  `WITH items AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[], $9::jsonb[],
                          $10::jsonb[], $11::timestamptz[], $12::text[], $13::text[], $14::timestamptz[], $15::text[], $16::text[], $17::text[])
       WITH ORDINALITY AS i(deposit_id, deposit_version, deposit_status, outcome, order_id, order_version, order_status, payment,
                            candidate_order_ids, decision, decided_at, consumer, message_id, started_at, organisation_id, mode, bank_account_id, item)),
   paid AS (
     UPDATE orders o SET status = 'paid', payment = i.payment, closed_at = i.decided_at, updated_at = i.decided_at
     FROM items i
     WHERE o.id = i.order_id AND o.xmin = i.order_version::xid AND o.status = i.order_status
       AND EXISTS (SELECT FROM transactions t WHERE t.id = i.deposit_id AND t.xmin = i.deposit_version::xid AND t.status = i.deposit_status)
     RETURNING i.item),
   decided AS (
     UPDATE transactions t SET status = i.outcome, order_id = i.order_id,
       candidate_order_ids = ARRAY(SELECT c.id FROM jsonb_array_elements_text(i.candidate_order_ids) WITH ORDINALITY AS c(id, n) ORDER BY c.n),
       decision = i.decision, decided_at = i.decided_at, updated_at = i.decided_at
     FROM items i
     WHERE t.id = i.deposit_id AND t.xmin = i.deposit_version::xid AND t.status = i.deposit_status
       AND (i.order_id IS NULL OR i.item IN (SELECT item FROM paid))
     RETURNING i.item::int AS "item", ${transactionFields('t')}),
   claimed AS (${inboxClaimSql({ consumer: 'i.consumer', messageId: 'i.message_id', processedAt: 'i.started_at' }, 'FROM items i WHERE i.item IN (SELECT item FROM decided)')}),
   recorded AS (
     INSERT INTO events (id, organisation_id, mode, bank_account_id, type, data, created_at)
     SELECT e.id, i.organisation_id, i.mode, i.bank_account_id, e.type, e.data, i.decided_at
     FROM unnest($18::int[], $19::text[], $20::text[], $21::jsonb[]) WITH ORDINALITY AS e(item, id, type, data, n)
     JOIN items i ON i.item = e.item
     WHERE e.item IN (SELECT item FROM decided)
     ORDER BY e.n),
   queued AS (${outboxInsert(22, 'u.message_id IN (SELECT e.id FROM unnest($18::int[], $19::text[]) AS e(item, id) WHERE e.item IN (SELECT item FROM decided))', { leased: true })})
   SELECT d.* FROM (SELECT decision_written_whole(NOT EXISTS (SELECT FROM paid WHERE item NOT IN (SELECT item FROM decided)))) AS whole
   LEFT JOIN decided d ON true`,
);

/** A decision to write onto the rows `readDeposit` read. */
export interface DecisionToWrite {
  pending: PendingDeposit;
  decision: Decision;
  claim: MessageClaim;
  ctx: ApplyContext & {
    /** When the decision began, after the account's lock, before the read: the inbox row's time. */
    startedAt: Date;
  };
}

/** For a confirmation, the order as read and the payment written onto it. */
function paymentOf(pending: PendingDeposit, decision: Decision, now: Date): { order: CandidateRow; payment: Payment } | undefined {
  if (decision.outcome !== 'confirmed') return undefined;
  const order = pending.candidates.rows.get(decision.orderId);
  if (order === undefined) throw new Error(`order ${decision.orderId} is not among the candidates read`);
  const { deposit } = pending;
  return { order, payment: depositPayment({ ...deposit, amount: amountOf(deposit.amount) }, AUTOMATIC(decision.reason), now) };
}

/** SQLSTATE of `decision_written_whole`'s refusal. */
const SERIALIZATION_FAILURE = '40001';

/**
 * A decision's rows and events as written: the events' objects are made from the rows as read and
 * the values written, as the views would make them from the rows stored (the versions guarantee
 * it: no other column can have changed).
 */
function decisionWrite({ pending, decision, ctx }: DecisionToWrite) {
  const { deposit, version } = pending;
  const { now } = ctx;
  const paying = paymentOf(pending, decision, now);
  const candidateOrderIds = decision.outcome === 'held' ? decision.candidateOrderIds : [];
  const decided: TransactionRow = {
    ...deposit,
    status: decision.outcome,
    orderId: paying?.order.id ?? null,
    candidateOrderIds,
    decision: asStored(decision.explanation),
    decidedAt: now,
    updatedAt: now,
  };
  const paidOrder = paying && { ...paying.order, status: 'paid', payment: asStored(paying.payment), closedAt: now, updatedAt: now };
  const events = decisionEvents(decided, paidOrder, decision, ctx.publicBaseUrl);
  const { ids, announcements } = eventAnnouncements({ organisationId: deposit.organisationId, mode: modeOf(deposit) }, events);
  return { deposit, version, paying, candidateOrderIds, events, ids, announcements };
}

/** The parameters of `writeDecisionsStatement` for these decisions' writes, in its order. */
function decisionsParameters(writes: (ReturnType<typeof decisionWrite> & { given: DecisionToWrite })[]): unknown[] {
  const events = writes.flatMap((w, i) => w.events.map((event, n) => ({ item: i + 1, id: w.ids[n]!, event })));
  return [
    writes.map((w) => w.deposit.id),
    writes.map((w) => w.version),
    writes.map(() => 'pending'),
    writes.map((w) => w.given.decision.outcome),
    writes.map((w) => w.paying?.order.id ?? null),
    writes.map((w) => w.paying?.order.version ?? null),
    // Only an open order is paid by a decision, whatever was read.
    writes.map((w) => (w.paying === undefined ? null : 'open')),
    writes.map((w) => (w.paying === undefined ? null : JSON.stringify(w.paying.payment))),
    writes.map((w) => JSON.stringify(w.candidateOrderIds)),
    writes.map((w) => JSON.stringify(w.given.decision.explanation)),
    writes.map((w) => w.given.ctx.now),
    writes.map((w) => w.given.claim.consumer),
    writes.map((w) => w.given.claim.messageId),
    writes.map((w) => w.given.ctx.startedAt),
    writes.map((w) => w.deposit.organisationId),
    writes.map((w) => modeOf(w.deposit)),
    writes.map((w) => w.deposit.bankAccountId),
    events.map((e) => e.item),
    events.map((e) => e.id),
    events.map((e) => e.event.type),
    events.map((e) => JSON.stringify(e.event.data)),
    ...outboxParameters(writes.flatMap((w) => w.announcements)),
  ];
}

/**
 * Writes new deposits' decisions and their events (transaction.deposited, then order.paid or
 * transaction.held) onto the rows `readDeposit` read, in one statement. Resolves, in the order
 * given, with each deposit as decided, or null for one whose deposit or order changed since the
 * read (it wrote nothing; its caller reads and decides again). Rejects, having written nothing,
 * with a serialization failure when the statement found an order paid but its deposit not decided.
 * The announcements of the decisions written go to `handOver` once the statement committed (`sql`
 * must run it on its own, not in a transaction of the caller's).
 */
export async function writeDecisions(sql: Sql, toWrite: DecisionToWrite[], handOver: OutboxHandOver): Promise<(TransactionRow | null)[]> {
  const writes = toWrite.map((given) => ({ ...decisionWrite(given), given }));
  const rows = await sql.rows<TransactionRow & { item: number | null }>(writeDecisionsStatement, decisionsParameters(writes));
  // The LEFT JOIN gives a row of NULLs when no deposit was decided.
  const byItem = new Map(rows.flatMap(({ item, ...row }) => (item === null ? [] : [[item, row as TransactionRow] as const])));
  handOver(writes.flatMap((w, i) => (byItem.has(i + 1) ? w.announcements : [])));
  return toWrite.map((_, i) => byItem.get(i + 1) ?? null);
}

/** At most this many decisions written by one statement. */
export const DECISIONS_PER_STATEMENT = 50;

/** Writes one decision, with the others written at the same time; see `decisionWriter`. */
export type DecisionWriter = (toWrite: DecisionToWrite) => Promise<TransactionRow>;

/**
 * Writes decisions the way the database groups commits (a `BatchWriter`): one alone at once, and
 * those made while a write runs together in the next statement, one round trip and one commit for
 * the decisions of many accounts. Each decision resolves with its deposit as decided, or throws
 * StaleDecisionError, having written nothing, when its deposit or order changed since the read. A
 * batch that fails (one decision's serialization failure fails the statement) is written again
 * decision by decision, so that only the stale one fails. Their announcements go to `handOver`.
 */
export function decisionWriter(sql: Sql, handOver: OutboxHandOver): DecisionWriter {
  const batches = new BatchWriter((toWrite: DecisionToWrite[]) => writeDecisions(sql, toWrite, handOver), DECISIONS_PER_STATEMENT);
  return async (toWrite) => {
    const { deposit } = toWrite.pending;
    const orderId = toWrite.decision.outcome === 'confirmed' ? toWrite.decision.orderId : undefined;
    const changed = () => new StaleDecisionError(`deposit ${deposit.id}${orderId === undefined ? '' : ` or order ${orderId}`} changed since the decision read it`);
    const written = await batches.submit(toWrite).catch((error: unknown) => {
      throw (error as { code?: unknown }).code === SERIALIZATION_FAILURE ? changed() : error;
    });
    if (written === null) throw changed();
    return written;
  };
}
