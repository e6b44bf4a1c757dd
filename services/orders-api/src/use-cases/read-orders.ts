import { AppError, OrderId, type Order, type OrderListQuery } from '@pmatch/contracts';
import { orderObject, type OrderRow } from '@pmatch/db';
import type { z } from 'zod';
import type { Actor } from '../domain/actor';
import { wellFormedId } from '../domain/ids';
import { findOrder, listOrders } from '../data/orders';
import type { OrdersApiDeps } from './deps';
import { listOf, type List } from './lists';

/** The order with this id if the actor may see it, else 404. */
export async function findVisibleOrder(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor, rawId: string | undefined): Promise<OrderRow> {
  const id = wellFormedId(OrderId, rawId, 'order');
  const row = await findOrder(deps.database.sql, actor, id);
  if (row === null) throw new AppError('resource_missing', `No such order: ${id}.`, { param: 'id' });
  return row;
}

export async function getOrder(deps: Pick<OrdersApiDeps, 'database' | 'publicBaseUrl'>, actor: Actor, rawId: string | undefined): Promise<Order> {
  return orderObject(await findVisibleOrder(deps, actor, rawId), deps.publicBaseUrl);
}

/** Orders newest first. */
export async function getOrderList(
  deps: Pick<OrdersApiDeps, 'database' | 'publicBaseUrl'>,
  actor: Actor,
  query: z.infer<typeof OrderListQuery>,
): Promise<List<Order>> {
  const page = await listOrders(deps.database.prisma, actor, {
    limit: query.limit,
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.external_id === undefined ? {} : { externalId: query.external_id }),
    ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
  });
  return listOf(page, (row) => orderObject(row, deps.publicBaseUrl), { what: 'order', id: query.starting_after });
}
