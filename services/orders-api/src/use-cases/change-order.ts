import { AppError, type CommandAudit, type MarkPaidRequest, type Order, type UpdateOrderRequest } from '@pmatch/contracts';
import { orderObject, type OrderRow } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { pastReversalWindow } from '../domain/orders';
import { cancelOpenOrExpiredOrder, changeOpenOrder } from '../data/orders';
import { auditedDecision, inAuditedTransaction, type AuditContext } from './audit';
import type { OrdersApiDeps } from './deps';

// Each acts on an order the actor may see (`findVisibleOrder`). A person on the console passes
// `audit`: the action's audit row is written with it (`inAuditedTransaction`, `auditedDecision`).

type ChangeDeps = Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl' | 'outbox'>;

/** Changes an open order and records order.updated. */
export async function updateOrder(deps: ChangeDeps, order: OrderRow, change: UpdateOrderRequest, audit?: AuditContext): Promise<Order> {
  assertEditable(order, ['open'], 'changed');
  const row = await inAuditedTransaction(
    deps,
    audit,
    async (tx) => (await changeOpenOrder(tx, order.id, change, deps.clock.now(), deps.publicBaseUrl)) ?? refuse(notOpen('changed')),
    () => ({ action: 'order.update', objectId: order.id, detail: { amount: change.amount, payer_name: change.payer_name } }),
  );
  deps.outbox.nudge();
  return orderObject(row, deps.publicBaseUrl);
}

/** Cancels an open or expired order and records order.canceled. */
export async function cancelOrder(deps: ChangeDeps, order: OrderRow, audit?: AuditContext): Promise<Order> {
  assertEditable(order, ['open', 'expired'], 'canceled');
  const row = await inAuditedTransaction(
    deps,
    audit,
    async (tx) => (await cancelOpenOrExpiredOrder(tx, order.id, deps.clock.now(), deps.publicBaseUrl)) ?? refuse(notOpen('canceled')),
    () => ({ action: 'order.cancel', objectId: order.id, detail: {} }),
  );
  deps.outbox.nudge();
  return orderObject(row, deps.publicBaseUrl);
}

/**
 * Asks the matcher to reverse the order's payment. Past the 24-hour window the matcher allows it
 * only from the console (`dashboard`) and with a `reason`.
 */
export async function reverseOrder(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'matcher'>,
  actor: Actor,
  order: OrderRow,
  reason?: string,
  audit?: AuditContext,
): Promise<Order> {
  const request = { reason: reason ?? null, after_24_hours: pastReversalWindow(order, deps.clock.now()) };
  return auditedDecision(deps, audit, { action: 'order.reverse', objectId: order.id, detail: request }, (commandAudit) =>
    deps.matcher.orderCommand({
      type: 'order.reverse',
      order_id: order.id,
      ...commandContext(actor),
      ...(reason === undefined ? {} : { reason }),
      ...auditOf(commandAudit),
    }),
  );
}

/** The organisation and mode a command acts in, and who decides, as the matcher records it on the payment. */
export function commandContext(actor: Actor): { organisation_id: string; mode: Actor['mode']; decided_by: string; trigger: Actor['trigger'] } {
  return { organisation_id: actor.organisationId, mode: actor.mode, decided_by: actor.decidedBy, trigger: actor.trigger };
}

/** The `audit` field of a matcher command: present only when a person on the console asks. */
export function auditOf(audit: CommandAudit | undefined): { audit?: CommandAudit } {
  return audit === undefined ? {} : { audit };
}

/** Asks the matcher to record the order as paid outside any deposit it saw. */
export async function markOrderPaid(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'matcher'>,
  actor: Actor,
  order: OrderRow,
  request: MarkPaidRequest,
  audit?: AuditContext,
): Promise<Order> {
  if (order.source !== null) throw notOpen('marked paid');
  return auditedDecision(deps, audit, { action: 'order.mark_paid', objectId: order.id, detail: {} }, (commandAudit) =>
    deps.matcher.orderCommand({
      type: 'order.mark_paid',
      order_id: order.id,
      ...commandContext(actor),
      ...(request.paid_at === undefined ? {} : { paid_at: request.paid_at }),
      ...auditOf(commandAudit),
    }),
  );
}

/** Orders from a shop platform are managed there, never here. */
function assertEditable(order: OrderRow, statuses: string[], what: string): void {
  if (order.source !== null || !statuses.includes(order.status)) throw notOpen(what);
}

function refuse(error: AppError): never {
  throw error;
}

function notOpen(what: string): AppError {
  return new AppError('order_not_open', `The order cannot be ${what}: it is not open, or it is managed by a shop platform.`);
}
