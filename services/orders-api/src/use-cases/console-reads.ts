import { Decision, Payment, type MatchingRule, type PreviewedConfirmation } from '@pmatch/contracts';
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
  searchDeposits,
  searchOrders,
  type DepositSearch,
  type OrderSearch,
  type OverviewCounts,
  type SeqSlice,
} from '../data/console-search';
import type { OrdersApiDeps } from './deps';
import { getSettings } from './manage-settings';
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

/**
 * What a deposit's screen shows: the deposit, its decision, the orders it names, the earlier deposit
 * a possible duplicate repeats, and (when searching) the orders it may be matched to.
 */
export async function depositWithCandidates(
  deps: ReadDeps,
  actor: Actor,
  rawId: string,
  matchSearch: { searching: boolean; text: string | undefined },
): Promise<{
  deposit: TransactionRow;
  decision: Decision | { reason: string; candidates: []; near_misses?: undefined; duplicate_of?: undefined; dedicated_account?: undefined };
  orders: OrderRow[];
  matchable: OrderRow[] | undefined;
  duplicateOf: TransactionRow | undefined;
  neighbours: { previous: string | undefined; next: string | undefined };
}> {
  const deposit = await findVisibleTransaction(deps, actor, rawId);
  const parsed = Decision.safeParse(deposit.decision);
  const decision = parsed.success ? parsed.data : { reason: '', candidates: [] as [] };
  const orders = await findOrdersByIds(deps.database.prisma, actor, [
    ...new Set([
      ...decision.candidates.map((c) => c.order_id),
      ...(decision.near_misses ?? []).map((m) => m.order_id),
      ...(deposit.orderId ? [deposit.orderId] : []),
      ...(decision.dedicated_account?.order_id ? [decision.dedicated_account.order_id] : []),
    ]),
  ]);
  const [duplicateOf] = decision.duplicate_of === undefined ? [] : await findTransactionsByIds(deps.database.prisma, actor, [decision.duplicate_of]);
  const matchable =
    matchSearch.searching && (deposit.status === 'held' || deposit.status === 'unmatched')
      ? await findMatchableOrders(deps.database.prisma, actor, deposit, matchSearch.text, 20)
      : undefined;
  const { previous, next } = await heldNeighbours(deps.database.prisma, actor, deposit);
  return { deposit, decision, orders, matchable, duplicateOf, neighbours: { previous, next } };
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

/** A held deposit whose one fitting candidate is clear, and that order. */
export interface ClearHeldDeposit {
  deposit: TransactionRow;
  order: OrderRow;
}

/**
 * The held deposits (the latest `limit`, listed oldest first) for which exactly one candidate's name
 * fits, nothing rules it out, and its order is open or expired: those a person may confirm in bulk.
 */
export async function clearHeldDeposits(deps: ReadDeps, actor: Actor, limit: number): Promise<ClearHeldDeposit[]> {
  const held = (await searchDeposits(deps.database.prisma, actor, { status: 'held', limit })).rows.sort(
    (a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || (a.seq < b.seq ? -1 : 1),
  );
  const single = held.flatMap((deposit) => {
    const parsed = Decision.safeParse(deposit.decision);
    if (!parsed.success) return [];
    const fitting = parsed.data.candidates.filter((c) => c.fit !== null && c.excluded_because == null);
    return fitting.length === 1 ? [{ deposit, orderId: fitting[0]!.order_id }] : [];
  });
  const orders = new Map(
    (
      await findOrdersByIds(
        deps.database.prisma,
        actor,
        single.map((s) => s.orderId),
      )
    ).map((o) => [o.id, o]),
  );
  return single.flatMap(({ deposit, orderId }) => {
    const order = orders.get(orderId);
    return order !== undefined && (order.status === 'open' || order.status === 'expired') ? [{ deposit, order }] : [];
  });
}

/** An order with its timeline: its own events and those of the deposits that paid it, in recorded order. */
export async function orderWithTimeline(deps: ReadDeps, actor: Actor, rawId: string): Promise<{ order: OrderRow; timeline: EventRow[] }> {
  const order = await findVisibleOrder(deps, actor, rawId);
  const events = await eventsAbout(deps.database.prisma, actor, [order.id]);
  const deposits = [...new Set(events.flatMap(paymentsIn).flatMap((p) => (p.transaction_id ? [p.transaction_id] : [])))];
  const depositEvents = await eventsAbout(deps.database.prisma, actor, deposits);
  return { order, timeline: [...events, ...depositEvents].sort((a, b) => (a.seq < b.seq ? -1 : 1)) };
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
