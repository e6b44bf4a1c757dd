import type { OrderStatus, UpdateOrderRequest } from '@pmatch/contracts';
import {
  asSql,
  insertOrdersUnlessExternalIdTaken,
  modeOf,
  orderFields,
  orderObject,
  recordEvents,
  sql,
  preparedQuery,
  type Db,
  type NewOrderAt,
  type OutboxHandOver,
  type OrderRow,
  type Prisma,
  type Sql,
  type SqlOrPrisma,
  type Tx,
} from '@pmatch/db';
import { BatchWriter, pauseFor } from '@pmatch/platform';
import type { Scope } from '../domain/actor';
import { sliceBySeq, type Slice } from './slices';
import { scopeOf } from './scope';

/** At most this many new orders written by one statement. */
const ORDERS_PER_STATEMENT = 100;

/**
 * Writes new orders asked for while a write runs together in the next statement (a `BatchWriter`),
 * for requests without an Idempotency-Key. Each resolves once its statement committed: its row, or
 * null when its external_id was taken. Their messages go to `handOver` after the commit; with
 * `gatherMs` above 0, a statement that commits with orders waiting is followed by that pause
 * (docs/decisions/0010-new-orders-written-together-gathered-under-load.md).
 */
export function newOrderWriter(sql: Sql, publicBaseUrl: string, handOver: OutboxHandOver, gatherMs: number): (order: NewOrderAt) => Promise<OrderRow | null> {
  const batches = new BatchWriter((orders: NewOrderAt[]) => insertOrdersUnlessExternalIdTaken(sql, orders, publicBaseUrl, handOver), ORDERS_PER_STATEMENT, {
    gatherUnderLoad: gatherMs > 0 ? pauseFor(gatherMs) : undefined,
  });
  return (order) => batches.submit(order);
}

/** An order in the scope of an API key: its organisation, mode and bank account, if it has one (`scopeOf`, in SQL). */
const findInScope = preparedQuery<{ id: string; organisationId: string; mode: string; bankAccountId: string | null }, OrderRow>(
  'orders_api.find_order',
  (p) => sql`SELECT ${orderFields()} FROM orders
   WHERE id = ${p.id} AND organisation_id = ${p.organisationId} AND mode = ${p.mode}
     AND (${p.bankAccountId}::text IS NULL OR bank_account_id = ${p.bankAccountId})`,
);

/** The order with this id in the caller's scope: plain SQL, as GET /v1/orders/{id} is a hot path. */
export async function findOrder(db: SqlOrPrisma, scope: Scope, id: string): Promise<OrderRow | null> {
  const [row] = await asSql(db).rows(findInScope, { id, organisationId: scope.organisationId, mode: scope.mode, bankAccountId: scope.bankAccountId });
  return row ?? null;
}

const findByExternalId = preparedQuery<{ organisationId: string; mode: string; externalId: string }, OrderRow>(
  'orders_api.find_order_by_external_id',
  (p) => sql`SELECT ${orderFields()} FROM orders WHERE organisation_id = ${p.organisationId} AND mode = ${p.mode} AND external_id = ${p.externalId}`,
);

export async function findOrderByExternalId(db: SqlOrPrisma, scope: Scope, externalId: string): Promise<OrderRow | null> {
  const [row] = await asSql(db).rows(findByExternalId, { organisationId: scope.organisationId, mode: scope.mode, externalId });
  return row ?? null;
}

/**
 * Changes an open order (PATCH) and records order.updated, in the caller's transaction. Conditional on
 * the order still being open and not from a shop: null when it no longer is (the matcher may have
 * paid it a moment ago).
 */
export async function changeOpenOrder(tx: Tx, orderId: string, change: UpdateOrderRequest, now: Date, publicBaseUrl: string): Promise<OrderRow | null> {
  const data: Prisma.OrderUpdateManyMutationInput = {
    ...(change.amount === undefined ? {} : { amount: BigInt(change.amount) }),
    ...(change.payer_name === undefined ? {} : { payerName: change.payer_name }),
    ...(change.metadata === undefined ? {} : { metadata: change.metadata }),
  };
  const updated = await tx.order.updateMany({
    where: { id: orderId, status: 'open', OR: [{ source: null }, { source: { not: 'shop' } }] },
    data: { ...data, updatedAt: now },
  });
  if (updated.count !== 1) return null;
  return recordChange(tx, orderId, 'order.updated', now, publicBaseUrl);
}

/**
 * Cancels an open or expired order and records order.canceled, in the caller's transaction. One
 * conditional UPDATE decides, whatever status the caller read before: an order the expiry sweeper
 * moved to expired a moment ago is canceled all the same, and keeps the moment it left open
 * (closed_at). Null when the order is neither open nor expired (paid meanwhile) or is from a shop.
 */
export async function cancelOpenOrExpiredOrder(tx: Tx, orderId: string, now: Date, publicBaseUrl: string): Promise<OrderRow | null> {
  const updated = await tx.$executeRaw`
    UPDATE orders SET status = 'canceled', closed_at = COALESCE(closed_at, ${now}), updated_at = ${now}
    WHERE id = ${orderId} AND status IN ('open', 'expired') AND source IS DISTINCT FROM 'shop'`;
  if (updated !== 1) return null;
  return recordChange(tx, orderId, 'order.canceled', now, publicBaseUrl);
}

async function recordChange(tx: Tx, orderId: string, event: 'order.updated' | 'order.canceled', now: Date, publicBaseUrl: string): Promise<OrderRow> {
  const row = await tx.order.findUniqueOrThrow({ where: { id: orderId } });
  await recordEvents(tx, { organisationId: row.organisationId, mode: modeOf(row), bankAccountId: row.bankAccountId, at: now }, [
    { type: event, data: { object: orderObject(row, publicBaseUrl) } },
  ]);
  return row;
}

/** Orders newest first, after the cursor order when given; undefined when the cursor is unknown. */
export async function listOrders(
  db: Db,
  scope: Scope,
  query: { status?: OrderStatus; externalId?: string; limit: number; startingAfter?: string },
): Promise<Slice<OrderRow> | undefined> {
  const inScope = scopeOf(scope);
  return sliceBySeq(
    query,
    (id) => db.order.findFirst({ where: { id, ...inScope }, select: { seq: true } }),
    (cursorSeq, take) =>
      db.order.findMany({
        where: {
          ...inScope,
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(query.externalId === undefined ? {} : { externalId: query.externalId }),
          ...(cursorSeq === undefined ? {} : { seq: { lt: cursorSeq } }),
        },
        orderBy: { seq: 'desc' },
        take,
      }),
  );
}
