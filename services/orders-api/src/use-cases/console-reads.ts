import { AppError, Decision, Payment, Reversal, type DepositExplanation, type MatchingRule, type PreviewedConfirmation } from '@pmatch/contracts';
import type { AuditLogRow, EventRow, OrderRow, TransactionRow } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { listAudit, matchingRulesReviewed } from '../data/audit-log';
import {
  eventsAbout,
  findEvent,
  findMatchableOrders,
  findOrdersByIds,
  findTransactionsByIds,
  heldNeighbours,
  depositCounts,
  latestEvents,
  overviewCounts,
  reversalsOfDeposit,
  depositsThatCouldPay,
  searchDeposits,
  searchOrders,
  type DepositSearch,
  type OrderSearch,
  type OverviewCounts,
  type SeqSlice,
} from '../data/console-search';
import type { OrdersApiDeps } from './deps';
import { getSettings } from './manage-settings';
import { getTeam } from './manage-team';
import { findVisibleOrder } from './read-orders';
import { findVisibleTransaction } from './read-transactions';

// What the console's screens read, beyond what the API's own use cases give. Every read stays in
// the actor's organisation and mode.

type ReadDeps = Pick<OrdersApiDeps, 'database'>;

export async function searchDepositsOf(deps: ReadDeps, actor: Actor, search: DepositSearch): Promise<SeqSlice<TransactionRow>> {
  return searchDeposits(deps.database.prisma, actor, search);
}

export async function searchOrdersOf(deps: ReadDeps, actor: Actor, search: OrderSearch): Promise<SeqSlice<OrderRow>> {
  return searchOrders(deps.database.prisma, actor, search);
}

/** How the deposit's screen explains it: decided again now, or as stored when that is all there is. */
export type ShownExplanation =
  | { kind: 'current'; outcome: 'confirmed' | 'held' | 'unmatched'; orderId: string | null; rules: MatchingRule[] }
  /** Confirmed or excluded: the stored decision is the whole story. */
  | { kind: 'stored' }
  /** Held or unmatched, but the matcher did not answer in time: the stored decision, said to be so. */
  | { kind: 'unavailable' };

/** A payment this deposit made that a person reversed: the reopened order, when, by whom and why. */
export interface ReversedPayment {
  order: OrderRow | undefined;
  orderId: string;
  reversedAt: Date;
  decidedBy: string | null;
  reason: string | null;
}

/**
 * What a deposit's screen shows: the deposit; its decision, decided again by the matcher under the
 * seller's rules and orders as they are now when it is held or unmatched (the stored one beside it,
 * docs/decisions/0180-explanations-recomputed-when-shown.md); the orders both name; a reversal of a
 * payment it made; the earlier deposit a possible duplicate repeats; and (when searching) the
 * orders it may be matched to.
 */
export async function depositWithCandidates(
  deps: ReadDeps & Pick<OrdersApiDeps, 'matcher'>,
  actor: Actor,
  rawId: string,
  matchSearch: { searching: boolean; text: string | undefined },
): Promise<{
  deposit: TransactionRow;
  decision: Decision;
  stored: Decision;
  explanation: ShownExplanation;
  orders: OrderRow[];
  matchable: OrderRow[] | undefined;
  duplicateOf: TransactionRow | undefined;
  reversals: ReversedPayment[];
  neighbours: { previous: string | undefined; next: string | undefined };
}> {
  const deposit = await findVisibleTransaction(deps, actor, rawId);
  const parsed = Decision.safeParse(deposit.decision);
  const stored: Decision = parsed.success ? parsed.data : { reason: '', candidates: [] };
  const decidable = deposit.status === 'held' || deposit.status === 'unmatched';
  const now = decidable ? await currentExplanation(deps, actor, deposit.id) : undefined;
  const decision = now?.decision ?? stored;
  const reversals = await reversalsOfDeposit(deps.database.prisma, actor, deposit.id, 5);
  const reversed = reversals.flatMap(reversalIn);
  const orders = await findOrdersByIds(deps.database.prisma, actor, [
    ...new Set([
      ...[decision, stored].flatMap((d) => [...d.candidates.map((c) => c.order_id), ...(d.near_misses ?? []).map((m) => m.order_id)]),
      ...reversed.map((r) => r.orderId),
      ...(deposit.orderId ? [deposit.orderId] : []),
      ...[decision, stored].flatMap((d) => (d.dedicated_account?.order_id ? [d.dedicated_account.order_id] : [])),
    ]),
  ]);
  const [duplicateOf] = decision.duplicate_of === undefined ? [] : await findTransactionsByIds(deps.database.prisma, actor, [decision.duplicate_of]);
  const orderById = new Map(orders.map((o) => [o.id, o]));
  const matchable = matchSearch.searching && decidable ? await findMatchableOrders(deps.database.prisma, actor, deposit, matchSearch.text, 20) : undefined;
  const { previous, next } = await heldNeighbours(deps.database.prisma, actor, deposit);
  return {
    deposit,
    decision,
    stored,
    explanation:
      now === undefined
        ? { kind: decidable ? 'unavailable' : 'stored' }
        : { kind: 'current', outcome: now.outcome, orderId: now.order_id, rules: now.matching_rules },
    orders,
    matchable,
    duplicateOf,
    reversals: reversed.map((r) => ({ ...r, order: orderById.get(r.orderId) })),
    neighbours: { previous, next },
  };
}

/** The matcher's explanation of the deposit as it stands now; undefined when it did not answer (or the deposit was decided meanwhile). */
async function currentExplanation(deps: Pick<OrdersApiDeps, 'matcher'>, actor: Actor, transactionId: string): Promise<DepositExplanation | undefined> {
  try {
    return await deps.matcher.explainDeposit({
      type: 'deposit.explain',
      organisation_id: actor.organisationId,
      mode: actor.mode,
      transaction_id: transactionId,
    });
  } catch (error) {
    if (error instanceof AppError) return undefined;
    throw error;
  }
}

/** The reopened order and the reversal's facts, from an `order.payment_reversed` event. */
function reversalIn(event: EventRow): Omit<ReversedPayment, 'order'>[] {
  const data = event.data as { object?: { id?: unknown } };
  if (typeof data.object?.id !== 'string') return [];
  return [{ orderId: data.object.id, ...reversalFacts(event) }];
}

/** When, by whom and why a payment was reversed, from its `order.payment_reversed` event (null where the event does not say). */
function reversalFacts(event: EventRow): { reversedAt: Date; decidedBy: string | null; reason: string | null } {
  const reversal = Reversal.safeParse((event.data as { reversal?: unknown }).reversal);
  return { reversedAt: event.createdAt, decidedBy: reversal.success ? reversal.data.decided_by : null, reason: reversal.success ? reversal.data.reason : null };
}

/**
 * Where "confirm and next" goes after `deposit` was decided: the next held deposit, oldest first,
 * after it; else the oldest held one left; else none (the list of held deposits).
 */
export async function nextHeldDeposit(deps: ReadDeps, actor: Actor, deposit: TransactionRow): Promise<string | undefined> {
  const { next, oldest } = await heldNeighbours(deps.database.prisma, actor, deposit);
  return next ?? oldest;
}

/** How many deposits each tab holds, each counted to `cap` at most. */
export async function depositCountsOf(deps: ReadDeps, actor: Actor, statuses: readonly string[], cap: number): Promise<Record<string, number>> {
  return depositCounts(deps.database.prisma, actor, statuses, cap);
}

/** A payment of the order that a person reversed: the payment as it was, and when, by whom and why it was reversed. */
export interface PaymentReversal {
  payment: Payment;
  reversedAt: Date;
  decidedBy: string | null;
  reason: string | null;
  eventId: string;
}

/**
 * An order with its timeline (its own events and those of the deposits that paid it, in recorded
 * order), the payments of it that were reversed (oldest first), while it is open or expired the
 * held and unmatched deposits of its account and amount that could pay it, and the organisation's
 * people (their e-mails by id), to name who decided.
 */
export async function orderWithTimeline(
  deps: ReadDeps,
  actor: Actor,
  rawId: string,
): Promise<{ order: OrderRow; timeline: EventRow[]; reversals: PaymentReversal[]; couldPay: TransactionRow[]; people: Map<string, string> }> {
  const order = await findVisibleOrder(deps, actor, rawId);
  const events = await eventsAbout(deps.database.prisma, actor, [order.id]);
  const deposits = [...new Set(events.flatMap(paymentsIn).flatMap((p) => (p.transaction_id ? [p.transaction_id] : [])))];
  const depositEvents = await eventsAbout(deps.database.prisma, actor, deposits);
  const couldPay =
    order.status === 'open' || order.status === 'expired' ? await depositsThatCouldPay(deps.database.prisma, actor, order, COULD_PAY_LISTED) : [];
  return {
    order,
    timeline: [...events, ...depositEvents].sort((a, b) => (a.seq < b.seq ? -1 : 1)),
    reversals: events.filter((e) => e.type === 'order.payment_reversed').flatMap(reversalOf),
    couldPay,
    people: new Map((await getTeam(deps, actor.organisationId)).map((u) => [u.id, u.email])),
  };
}

/** The most deposits an order's page lists as those that could pay it. */
const COULD_PAY_LISTED = 20;

/** The reversed payment an `order.payment_reversed` event carries, with the reversal's facts. */
function reversalOf(event: EventRow): PaymentReversal[] {
  const payment = Payment.safeParse((event.data as { previous_payment?: unknown }).previous_payment);
  if (!payment.success) return [];
  return [{ payment: payment.data, ...reversalFacts(event), eventId: event.id }];
}

/** The payments an event carries: the order's own, and a reversal's previous one. */
function paymentsIn(event: EventRow): Payment[] {
  const data = event.data as { object?: { payment?: unknown }; previous_payment?: unknown };
  return [data.object?.payment, data.previous_payment].flatMap((p) => {
    const parsed = Payment.safeParse(p);
    return parsed.success ? [parsed.data] : [];
  });
}

/** The overview's figures (each counted to `cap` at most) and the latest ten events. */
export async function overviewOf(
  deps: ReadDeps,
  actor: Actor,
  today: { now: Date; end: Date },
  cap: number,
): Promise<{ counts: OverviewCounts; events: EventRow[] }> {
  const [counts, events] = await Promise.all([
    overviewCounts(deps.database.prisma, actor, today, cap),
    latestEvents(deps.database.prisma, actor, { limit: 10 }),
  ]);
  return { counts, events: events?.rows ?? [] };
}

/**
 * The rules the overview's first question starts from, while nobody has saved the organisation's
 * matching rules and `kana_width` is off; undefined once the question has no point.
 */
export async function rulesQuestionOf(deps: ReadDeps, actor: Actor): Promise<{ current: MatchingRule[] } | undefined> {
  if (await matchingRulesReviewed(deps.database.prisma, actor.organisationId)) return undefined;
  const current = (await getSettings(deps, actor)).matching_rules;
  return current.includes('kana_width') ? undefined : { current };
}

/** Events newest first, of one type when given, below the cursor event when given; an unknown cursor gives an empty list. */
export async function eventsOf(
  deps: ReadDeps,
  actor: Actor,
  query: { type?: string; beforeId?: string; limit: number },
): Promise<{ rows: EventRow[]; hasMore: boolean }> {
  return (await latestEvents(deps.database.prisma, actor, query)) ?? { rows: [], hasMore: false };
}

export async function findEventOf(deps: ReadDeps, actor: Actor, id: string): Promise<EventRow | null> {
  return findEvent(deps.database.prisma, actor, id);
}

/** The organisation's audit log, newest first, before the entry `beforeId` when given. */
export async function auditLogOf(
  deps: ReadDeps,
  organisationId: string,
  slice: { limit: number; beforeId?: bigint },
): Promise<{ rows: AuditLogRow[]; hasMore: boolean }> {
  return listAudit(deps.database.prisma, organisationId, slice);
}

/** The deposits and orders a rule preview names, to show them beside its pairs. */
export async function rowsOfPreview(
  deps: ReadDeps,
  actor: Actor,
  confirmations: PreviewedConfirmation[],
): Promise<{ deposits: TransactionRow[]; orders: OrderRow[] }> {
  const [deposits, orders] = await Promise.all([
    findTransactionsByIds(
      deps.database.prisma,
      actor,
      confirmations.map((c) => c.transaction_id),
    ),
    findOrdersByIds(
      deps.database.prisma,
      actor,
      confirmations.map((c) => c.order_id),
    ),
  ]);
  return { deposits, orders };
}
