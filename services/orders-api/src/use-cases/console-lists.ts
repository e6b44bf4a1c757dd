import { Decision, type NearMiss } from '@pmatch/contracts';
import type { OrderRow, TransactionRow } from '@pmatch/db';
import { findOrdersByIds, searchDeposits, type DepositSearch, type SeqSlice } from '../data/console-search';
import type { Actor } from '../domain/actor';
import type { OrdersApiDeps } from './deps';

// The console's deposit list and its CSV exports. Every read stays in the actor's organisation and
// mode: an export of test mode never holds a live deposit, nor the other way round.

type ReadDeps = Pick<OrdersApiDeps, 'database'>;

/** The near misses a deposit's decision lists (held and unmatched decisions), [] for any other. */
export function nearMissesOf(deposit: TransactionRow): NearMiss[] {
  const parsed = Decision.safeParse(deposit.decision);
  return parsed.success ? (parsed.data.near_misses ?? []) : [];
}

/** A page of the deposit list and the orders its near misses name (for their order numbers). */
export async function depositListOf(
  deps: ReadDeps,
  actor: Actor,
  search: DepositSearch,
): Promise<{ slice: SeqSlice<TransactionRow>; nearMissOrders: Map<string, OrderRow> }> {
  const prisma = deps.database.prisma;
  const slice = await searchDeposits(prisma, actor, search);
  const orderIds = [...new Set(slice.rows.flatMap((row) => nearMissesOf(row).map((m) => m.order_id)))];
  const orders = await findOrdersByIds(prisma, actor, orderIds);
  return { slice, nearMissOrders: new Map(orders.map((o) => [o.id, o])) };
}

/** How many deposits one read of an export takes: an export of any length holds this many in memory at most. */
export const EXPORT_PAGE = 500;

/** What an export writes: the deposits of a page, oldest first, and the orders they were confirmed for. */
export interface ExportPage {
  rows: TransactionRow[];
  orders: Map<string, OrderRow>;
}

/**
 * Every deposit under the list's filters, oldest first, a page at a time along the list's keyset
 * (a deposit recorded during the export comes at the end or not at all, never twice); each page
 * with the orders its deposits were confirmed for.
 */
export async function* depositsForExport(
  deps: ReadDeps,
  actor: Actor,
  search: Omit<DepositSearch, 'limit' | 'after' | 'oldestFirst'>,
): AsyncGenerator<ExportPage> {
  const prisma = deps.database.prisma;
  let after: bigint | undefined;
  do {
    const slice = await searchDeposits(prisma, actor, { ...search, oldestFirst: true, limit: EXPORT_PAGE, ...(after === undefined ? {} : { after }) });
    const orderIds = slice.rows.flatMap((row) => (row.orderId === null ? [] : [row.orderId]));
    const orders = await findOrdersByIds(prisma, actor, orderIds);
    yield { rows: slice.rows, orders: new Map(orders.map((o) => [o.id, o])) };
    after = slice.nextAfter;
  } while (after !== undefined);
}
