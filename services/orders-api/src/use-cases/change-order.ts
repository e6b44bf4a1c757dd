import { AppError, type MarkPaidRequest, type Order, type UpdateOrderRequest } from '@pmatch/contracts';
import { orderView, type OrderRow } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { cancelOpenOrExpiredOrder, changeOpenOrder } from '../data/orders';
import type { OrdersApiDeps } from './deps';

// Each acts on an order the actor may see (`findVisibleOrder`).

/** Changes an open order and records order.updated. */
export async function updateOrder(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl' | 'outbox'>,
  order: OrderRow,
  change: UpdateOrderRequest,
): Promise<Order> {
  assertEditable(order, ['open'], 'changed');
  const row = await changeOpenOrder(deps.database.prisma, order.id, change, deps.clock.now(), deps.publicBaseUrl);
  if (row === null) throw notOpen('changed');
  deps.outbox.nudge();
  return orderView(row, deps.publicBaseUrl);
}

/** Cancels an open or expired order and records order.canceled. */
export async function cancelOrder(deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl' | 'outbox'>, order: OrderRow): Promise<Order> {
  assertEditable(order, ['open', 'expired'], 'canceled');
  const row = await cancelOpenOrExpiredOrder(deps.database.prisma, order.id, deps.clock.now(), deps.publicBaseUrl);
  if (row === null) throw notOpen('canceled');
  deps.outbox.nudge();
  return orderView(row, deps.publicBaseUrl);
}

/**
 * Asks the matcher to reverse the order's payment. Past the 24-hour window the matcher allows it
 * only from the console (`dashboard`) and with a `reason`.
 */
export async function reverseOrder(deps: Pick<OrdersApiDeps, 'matcher'>, actor: Actor, order: OrderRow, reason?: string): Promise<Order> {
  return deps.matcher.orderCommand({
    type: 'order.reverse',
    order_id: order.id,
    ...commandContext(actor),
    ...(reason === undefined ? {} : { reason }),
  });
}

/** The organisation and mode a command acts in, and who decides, as the matcher records it on the payment. */
export function commandContext(actor: Actor): { organisation_id: string; mode: Actor['mode']; decided_by: string; trigger: Actor['trigger'] } {
  return { organisation_id: actor.organisationId, mode: actor.mode, decided_by: actor.decidedBy, trigger: actor.trigger };
}

/** Asks the matcher to record the order as paid outside any deposit it saw. */
export async function markOrderPaid(deps: Pick<OrdersApiDeps, 'matcher'>, actor: Actor, order: OrderRow, request: MarkPaidRequest): Promise<Order> {
  if (order.source !== null) throw notOpen('marked paid');
  return deps.matcher.orderCommand({
    type: 'order.mark_paid',
    order_id: order.id,
    ...commandContext(actor),
    ...(request.paid_at === undefined ? {} : { paid_at: request.paid_at }),
  });
}

/** Orders from a shop platform are managed there, never here. */
function assertEditable(order: OrderRow, statuses: string[], what: string): void {
  if (order.source !== null || !statuses.includes(order.status)) throw notOpen(what);
}

function notOpen(what: string): AppError {
  return new AppError('order_not_open', `The order cannot be ${what}: it is not open, or it is managed by a shop platform.`);
}
