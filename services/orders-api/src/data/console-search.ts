import { Prisma, eventFields, orderFields, transactionFields, type Db, type EventRow, type OrderRow, type TransactionRow } from '@pmatch/db';
import type { Scope } from '../domain/actor';

/**
 * A slice of a list in its order (newest or oldest first), and the seq of its last row to continue
 * past (`after`) when there are more.
 */
export interface SeqSlice<T> {
  rows: T[];
  nextAfter: bigint | undefined;
}

function sliceOf<T extends { seq: bigint }>(rows: T[], limit: number): SeqSlice<T> {
  return { rows: rows.slice(0, limit), nextAfter: rows.length > limit ? rows[limit - 1]!.seq : undefined };
}

/** A list's order: by seq (the order rows were recorded in), newest first unless `oldestFirst`. */
export interface SeqOrder {
  oldestFirst?: boolean;
  /** The seq of the previous page's last row: the slice continues past it in the list's order (keyset). */
  after?: bigint;
}

/** The keyset condition past `after` and the ORDER BY of the list's direction. */
function seqWalk(order: SeqOrder): { past: Prisma.Sql; orderBy: Prisma.Sql } {
  const past =
    order.after === undefined ? Prisma.empty : order.oldestFirst === true ? Prisma.sql`AND seq > ${order.after}` : Prisma.sql`AND seq < ${order.after}`;
  return { past, orderBy: order.oldestFirst === true ? Prisma.sql`ORDER BY seq ASC` : Prisma.sql`ORDER BY seq DESC` };
}

/** What the console's held-tab filter offers beyond the decision's own reasons: a decision that lists near misses. */
export const NEAR_MISS_FILTER = 'near_miss';

const HIRAGANA = Array.from({ length: 0x3096 - 0x3041 + 1 }, (_, i) => String.fromCharCode(0x3041 + i)).join('');
const KATAKANA = Array.from({ length: 0x3096 - 0x3041 + 1 }, (_, i) => String.fromCharCode(0x30a1 + i)).join('');
const SMALL_KANA = 'ァィゥェォッャュョヮヵヶ';
const LARGE_KANA = 'アイウエオツヤユヨワカケ';

/**
 * A name as the console's search compares it: NFKC (half-width kana full-width), hiragana as
 * katakana, small kana as large (banks print none), without spaces; so さとう きょうこ, サトウキョウコ
 * and ｻﾄｳ ｷﾖｳｺ are one. `searchFormSql` is the same in SQL, for the stored column.
 */
export function searchForm(text: string): string {
  return [...text.normalize('NFKC').replace(/\s+/g, '')]
    .map((c) => {
      const hiragana = HIRAGANA.indexOf(c);
      const kana = hiragana === -1 ? c : KATAKANA[hiragana]!;
      const small = SMALL_KANA.indexOf(kana);
      return small === -1 ? kana : LARGE_KANA[small]!;
    })
    .join('');
}

function searchFormSql(column: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`translate(translate(regexp_replace(normalize(${column}, NFKC), '\\s+', '', 'g'), ${HIRAGANA}, ${KATAKANA}), ${SMALL_KANA}, ${LARGE_KANA})`;
}

/** `%text%` for ILIKE in search form, with the text's own % _ \ taken literally. */
function containing(text: string): string {
  return `%${searchForm(text).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export interface DepositSearch extends SeqOrder {
  status: string;
  name?: string;
  amount?: number;
  from?: Date;
  to?: Date;
  /** The decision's reason, or `near_miss` for a decision that lists near misses. */
  reason?: string;
  limit: number;
}

/** The reason filter: the decision's own reason, or any near miss listed. */
function reasonIs(reason: string | undefined): Prisma.Sql {
  if (reason === undefined) return Prisma.empty;
  if (reason === NEAR_MISS_FILTER) return Prisma.sql`AND jsonb_array_length(COALESCE(decision -> 'near_misses', '[]'::jsonb)) > 0`;
  return Prisma.sql`AND decision ->> 'reason' = ${reason}`;
}

/**
 * Deposits of one status, newest or oldest first, walking transactions_status_list_idx
 * (organisation, mode, status, seq) from the cursor either way: a page reads its own rows plus
 * those the filters pass over.
 */
export async function searchDeposits(db: Db, scope: Scope, search: DepositSearch): Promise<SeqSlice<TransactionRow>> {
  const walk = seqWalk(search);
  const rows = await db.$queryRaw<TransactionRow[]>`
    SELECT ${Prisma.raw(transactionFields())} FROM transactions
    WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = ${search.status} AND direction = 'deposit'
      ${search.name === undefined ? Prisma.empty : Prisma.sql`AND ${searchFormSql(Prisma.sql`counterparty`)} ILIKE ${containing(search.name)}`}
      ${search.amount === undefined ? Prisma.empty : Prisma.sql`AND amount = ${search.amount}`}
      ${search.from === undefined ? Prisma.empty : Prisma.sql`AND occurred_at >= ${search.from}`}
      ${search.to === undefined ? Prisma.empty : Prisma.sql`AND occurred_at < ${search.to}`}
      ${reasonIs(search.reason)}
      ${walk.past}
    ${walk.orderBy} LIMIT ${search.limit + 1}`;
  return sliceOf(rows, search.limit);
}

export interface OrderSearch extends SeqOrder {
  status?: string;
  externalId?: string;
  payerName?: string;
  amountFrom?: number;
  amountTo?: number;
  from?: Date;
  to?: Date;
  limit: number;
}

/**
 * Orders newest or oldest first under the filters. An external_id finds its one order through its unique
 * index; otherwise the walk is along orders_status_list_idx or orders_list_idx from the cursor.
 */
export async function searchOrders(db: Db, scope: Scope, search: OrderSearch): Promise<SeqSlice<OrderRow>> {
  const walk = seqWalk(search);
  // At most one order has an external_id: asked in seq order, the planner may walk the list instead.
  const byExternalId = search.externalId !== undefined;
  const rows = await db.$queryRaw<OrderRow[]>`
    SELECT ${Prisma.raw(orderFields())} FROM orders
    WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode}
      ${search.status === undefined ? Prisma.empty : Prisma.sql`AND status = ${search.status}`}
      ${search.externalId === undefined ? Prisma.empty : Prisma.sql`AND external_id = ${search.externalId}`}
      ${search.payerName === undefined ? Prisma.empty : Prisma.sql`AND ${searchFormSql(Prisma.sql`payer_name`)} ILIKE ${containing(search.payerName)}`}
      ${search.amountFrom === undefined ? Prisma.empty : Prisma.sql`AND amount >= ${search.amountFrom}`}
      ${search.amountTo === undefined ? Prisma.empty : Prisma.sql`AND amount <= ${search.amountTo}`}
      ${search.from === undefined ? Prisma.empty : Prisma.sql`AND ordered_at >= ${search.from}`}
      ${search.to === undefined ? Prisma.empty : Prisma.sql`AND ordered_at < ${search.to}`}
      ${walk.past}
    ${byExternalId ? Prisma.empty : walk.orderBy} LIMIT ${search.limit + 1}`;
  return sliceOf(rows, search.limit);
}

/**
 * The open and expired orders a deposit may be matched to by hand: its account and amount, newest
 * first, optionally by payer name or external_id (orders_candidates_idx).
 */
export async function findMatchableOrders(
  db: Db,
  scope: Scope,
  deposit: { bankAccountId: string; amount: bigint },
  text: string | undefined,
  limit: number,
): Promise<OrderRow[]> {
  return db.$queryRaw<OrderRow[]>`
    SELECT ${Prisma.raw(orderFields())} FROM orders
    WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode}
      AND bank_account_id = ${deposit.bankAccountId} AND amount = ${deposit.amount} AND status IN ('open', 'expired')
      ${text === undefined ? Prisma.empty : Prisma.sql`AND (external_id = ${text} OR normalize(payer_name, NFKC) ILIKE ${containing(text)})`}
    ORDER BY seq DESC LIMIT ${limit}`;
}

export async function findOrdersByIds(db: Db, scope: Scope, ids: readonly string[]): Promise<OrderRow[]> {
  if (ids.length === 0) return [];
  return db.order.findMany({ where: { id: { in: [...ids] }, organisationId: scope.organisationId, mode: scope.mode } });
}

export async function findTransactionsByIds(db: Db, scope: Scope, ids: readonly string[]): Promise<TransactionRow[]> {
  if (ids.length === 0) return [];
  return db.transaction.findMany({ where: { id: { in: [...ids] }, organisationId: scope.organisationId, mode: scope.mode } });
}

/** The events about these objects (their `data.object.id`), in recorded order (events_object_idx). */
export async function eventsAbout(db: Db, scope: Scope, objectIds: readonly string[]): Promise<EventRow[]> {
  if (objectIds.length === 0) return [];
  return db.$queryRaw<EventRow[]>`
    SELECT ${Prisma.raw(eventFields())} FROM events
    WHERE (data #>> '{object,id}') IN (${Prisma.join(objectIds)}) AND organisation_id = ${scope.organisationId} AND mode = ${scope.mode}
    ORDER BY tx_id, seq`;
}

/** Events newest first, of one type when given, below the cursor event when given (events_list_idx, events_type_idx). */
export async function latestEvents(
  db: Db,
  scope: Scope,
  query: { type?: string; beforeId?: string; limit: number },
): Promise<{ rows: EventRow[]; hasMore: boolean } | undefined> {
  let below = Prisma.empty;
  if (query.beforeId !== undefined) {
    const [cursor] = await db.$queryRaw<{ tx_id: string; seq: bigint }[]>`
      SELECT tx_id::text AS tx_id, seq FROM events WHERE id = ${query.beforeId} AND organisation_id = ${scope.organisationId} AND mode = ${scope.mode}`;
    if (cursor === undefined) return undefined;
    below = Prisma.sql`AND (tx_id, seq) < (${cursor.tx_id}::xid8, ${cursor.seq})`;
  }
  const rows = await db.$queryRaw<EventRow[]>`
    SELECT ${Prisma.raw(eventFields())} FROM events
    WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode}
      ${query.type === undefined ? Prisma.empty : Prisma.sql`AND type = ${query.type}`}
      ${below}
    ORDER BY tx_id DESC, seq DESC LIMIT ${query.limit + 1}`;
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}

export async function findEvent(db: Db, scope: Scope, id: string): Promise<EventRow | null> {
  return db.event.findFirst({ where: { id, organisationId: scope.organisationId, mode: scope.mode } });
}

/** How many rows, counting at most `cap` (a busy shop's figures need no exact count past it). */
const capped = (cap: number) => Prisma.raw(String(cap + 1));

export interface OverviewCounts {
  held: number;
  unmatched: number;
  open: number;
  expiringToday: number;
  endpointsInTrouble: number;
}

/** The overview's figures, each counted to at most `cap` along an index. */
export async function overviewCounts(db: Db, scope: Scope, today: { now: Date; end: Date }, cap: number): Promise<OverviewCounts> {
  const [row] = await db.$queryRaw<{ held: bigint; unmatched: bigint; open: bigint; expiring: bigint; endpoints: bigint }[]>`
    SELECT
      (SELECT count(*) FROM (SELECT 1 FROM transactions WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = 'held' LIMIT ${capped(cap)}) h) AS held,
      (SELECT count(*) FROM (SELECT 1 FROM transactions WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = 'unmatched' LIMIT ${capped(cap)}) u) AS unmatched,
      (SELECT count(*) FROM (SELECT 1 FROM orders WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = 'open' LIMIT ${capped(cap)}) o) AS open,
      (SELECT count(*) FROM (SELECT 1 FROM orders WHERE status = 'open' AND expires_at >= ${today.now} AND expires_at < ${today.end}
         AND organisation_id = ${scope.organisationId} AND mode = ${scope.mode} LIMIT ${capped(cap)}) e) AS expiring,
      (SELECT count(*) FROM webhook_endpoints WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND deleted_at IS NULL
         AND (NOT enabled OR failing_since IS NOT NULL)) AS endpoints`;
  return {
    held: Number(row!.held),
    unmatched: Number(row!.unmatched),
    open: Number(row!.open),
    expiringToday: Number(row!.expiring),
    endpointsInTrouble: Number(row!.endpoints),
  };
}

/**
 * The held deposits on either side of `deposit` in the order a person works through them, oldest
 * first (by when they arrived, then seq): `next` after it, `previous` before it. `deposit` itself
 * need not be held any more (after it was just confirmed).
 */
export async function heldNeighbours(
  db: Db,
  scope: Scope,
  deposit: { id: string; occurredAt: Date; seq: bigint },
): Promise<{ previous: string | undefined; next: string | undefined; oldest: string | undefined }> {
  const [previous, next, oldest] = await Promise.all([
    db.$queryRaw<{ id: string }[]>`
      SELECT id FROM transactions
      WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = 'held' AND direction = 'deposit'
        AND (occurred_at, seq) < (${deposit.occurredAt}, ${deposit.seq})
      ORDER BY occurred_at DESC, seq DESC LIMIT 1`,
    db.$queryRaw<{ id: string }[]>`
      SELECT id FROM transactions
      WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = 'held' AND direction = 'deposit'
        AND (occurred_at, seq) > (${deposit.occurredAt}, ${deposit.seq})
      ORDER BY occurred_at, seq LIMIT 1`,
    db.$queryRaw<{ id: string }[]>`
      SELECT id FROM transactions
      WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = 'held' AND direction = 'deposit' AND id <> ${deposit.id}
      ORDER BY occurred_at, seq LIMIT 1`,
  ]);
  return { previous: previous[0]?.id, next: next[0]?.id, oldest: oldest[0]?.id };
}

/** How many deposits each status has, each counted to `cap` at most (walking transactions_status_list_idx). */
export async function depositCounts(db: Db, scope: Scope, statuses: readonly string[], cap: number): Promise<Record<string, number>> {
  const counts = await Promise.all(
    statuses.map(async (status) => {
      const [row] = await db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM (
          SELECT 1 FROM transactions
          WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = ${status} AND direction = 'deposit'
          LIMIT ${cap}) AS capped`;
      return [status, row?.n ?? 0] as const;
    }),
  );
  return Object.fromEntries(counts);
}

/**
 * The `order.payment_reversed` events whose reversed payment was made by this deposit, newest
 * first (events_type_idx: reversals are few among an organisation's events).
 */
export async function reversalsOfDeposit(db: Db, scope: Scope, depositId: string, limit: number): Promise<EventRow[]> {
  return db.$queryRaw<EventRow[]>`
    SELECT ${Prisma.raw(eventFields())} FROM events
    WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND type = 'order.payment_reversed'
      AND (data #>> '{previous_payment,transaction_id}') = ${depositId}
    ORDER BY tx_id DESC, seq DESC LIMIT ${limit}`;
}

/**
 * Held and unmatched deposits of the order's bank account and amount, newest first: those a person
 * may match to the order (the organisation's held and unmatched deposits, by status: transactions_status_list_idx).
 */
export async function depositsThatCouldPay(db: Db, scope: Scope, order: { bankAccountId: string; amount: bigint }, limit: number): Promise<TransactionRow[]> {
  return db.$queryRaw<TransactionRow[]>`
    SELECT ${Prisma.raw(transactionFields())} FROM transactions
    WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND direction = 'deposit'
      AND bank_account_id = ${order.bankAccountId} AND amount = ${order.amount} AND status IN ('held', 'unmatched')
    ORDER BY seq DESC LIMIT ${limit}`;
}
