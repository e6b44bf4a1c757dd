import {
  AppError,
  receivesEventType,
  type DeliveryLogQuery,
  type Event,
  type EventType,
  type ResendRequest,
  type WebhookDeliveryAttempt,
} from '@pmatch/contracts';
import type { WebhookEndpointRow } from '@pmatch/db';
import type { z } from 'zod';
import type { Actor } from '../domain/actor';
import { DELIVERY_ATTEMPT_ID_PREFIX, deliveryAttemptView, testEvent } from '../domain/webhook-endpoints';
import { findEventInScope, listDeliveryAttempts, listTestSends, requestFromDispatcher, type TestSendRow } from '../data/webhook-endpoints';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { OrdersApiDeps } from './deps';
import type { List } from './lists';

export type { TestSendRow };

// Each acts on an endpoint the actor may see (`findVisibleWebhookEndpoint`); the dispatcher sends.

/** Asks for a webhook.test event to the endpoint, switched off or not: that is how a repair is checked. */
export async function sendTestWebhook(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'outbox'>,
  actor: Actor,
  endpoint: WebhookEndpointRow,
  audit?: AuditContext,
): Promise<Event> {
  const event = testEvent(actor.mode, deps.clock.now());
  await inAuditedTransaction(
    deps,
    audit,
    (tx) => requestFromDispatcher(tx, { type: 'webhook.send_test', endpoint_id: endpoint.id, event }),
    () => ({ action: 'webhook_endpoint.test', objectId: endpoint.id, detail: { event_id: event.id } }),
  );
  deps.outbox.nudge();
  return event;
}

/** The endpoint's delivery attempts, newest first. */
export async function getDeliveryLog(
  deps: Pick<OrdersApiDeps, 'database'>,
  endpoint: WebhookEndpointRow,
  query: z.infer<typeof DeliveryLogQuery>,
): Promise<List<WebhookDeliveryAttempt>> {
  const page = await listDeliveryAttempts(deps.database.prisma, endpoint.id, {
    limit: query.limit,
    ...(query.event_id === undefined ? {} : { eventId: query.event_id }),
    ...(query.starting_after === undefined ? {} : { beforeAttemptId: BigInt(query.starting_after.slice(DELIVERY_ATTEMPT_ID_PREFIX.length)) }),
  });
  return { object: 'list', data: page.rows.map((r) => deliveryAttemptView(r, endpoint)), has_more: page.hasMore };
}

/**
 * The endpoint's latest test events sent and how each went (they are no recorded events, so not
 * among the delivery attempts), newest first.
 */
export async function getTestSends(deps: Pick<OrdersApiDeps, 'database'>, endpoint: WebhookEndpointRow, limit: number): Promise<TestSendRow[]> {
  return listTestSends(deps.database.prisma, endpoint.id, limit);
}

/** Asks for one more delivery of an event the endpoint receives; it must be switched on. */
export async function resendWebhook(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'outbox'>,
  actor: Actor,
  endpoint: WebhookEndpointRow,
  request: ResendRequest,
  audit?: AuditContext,
): Promise<{ object: 'webhook_resend'; endpoint_id: string; event_id: string }> {
  const event = await findEventInScope(deps.database.prisma, actor, request.event_id);
  if (event === null) throw new AppError('resource_missing', `No such event: ${request.event_id}.`, { param: 'event_id' });
  if (!receivesEventType(endpoint.enabledEvents, event.type as EventType)) {
    throw new AppError('parameter_invalid', `This endpoint does not receive ${event.type} events.`, { param: 'event_id' });
  }
  if (!endpoint.enabled) {
    throw new AppError('parameter_invalid', 'This endpoint is switched off; switch it on (PATCH enabled: true) before resending.', { param: 'id' });
  }
  await inAuditedTransaction(
    deps,
    audit,
    (tx) => requestFromDispatcher(tx, { type: 'webhook.resend', endpoint_id: endpoint.id, event_id: event.id }),
    () => ({ action: 'webhook_endpoint.resend', objectId: endpoint.id, detail: { event_id: event.id } }),
  );
  deps.outbox.nudge();
  return { object: 'webhook_resend', endpoint_id: endpoint.id, event_id: event.id };
}
