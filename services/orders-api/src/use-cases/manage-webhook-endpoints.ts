import {
  AppError,
  WebhookEndpointId,
  newId,
  type CreateWebhookEndpointRequest,
  type ListQuery,
  type UpdateWebhookEndpointRequest,
  type WebhookEndpoint,
} from '@pmatch/contracts';
import type { WebhookEndpointRow } from '@pmatch/db';
import { newSigningSecret, resolveWithSystem, vetWebhookUrl } from '@pmatch/platform';
import type { z } from 'zod';
import type { Actor } from '../domain/actor';
import { wellFormedId } from '../domain/ids';
import { enablementChange, storedEnabledEvents, webhookEndpointView } from '../domain/webhook-endpoints';
import { findWebhookEndpoint, insertWebhookEndpoint, listWebhookEndpoints, markWebhookEndpointDeleted, updateWebhookEndpoint } from '../data/webhook-endpoints';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { OrdersApiDeps } from './deps';
import type { List } from './lists';

/**
 * An endpoint receives the events of every bank account of its organisation and mode, so an actor
 * limited to one bank account may not see or change endpoints (nor their secrets and logs).
 */
export function assertMayManageWebhookEndpoints(actor: Actor): void {
  if (actor.bankAccountId !== null) {
    throw new AppError(
      'insufficient_scope',
      'This API key is limited to one bank account, but a webhook endpoint receives the events of every bank account of the organisation; use a key without a bank-account limit to manage webhook endpoints.',
    );
  }
}

/** The endpoint with this id if the actor may see it (not deleted), else 404. */
export async function findVisibleWebhookEndpoint(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor, rawId: string | undefined): Promise<WebhookEndpointRow> {
  assertMayManageWebhookEndpoints(actor);
  const id = wellFormedId(WebhookEndpointId, rawId, 'webhook endpoint');
  const row = await findWebhookEndpoint(deps.database.prisma, actor, id);
  if (row === null) throw new AppError('resource_missing', `No such webhook endpoint: ${id}.`, { param: 'id' });
  return row;
}

/** Registers an endpoint; its signing secret is shown this once (and later on request). */
export async function createWebhookEndpoint(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'secretBox' | 'addressPolicy'>,
  actor: Actor,
  request: CreateWebhookEndpointRequest,
  audit?: AuditContext,
): Promise<WebhookEndpoint & { secret: string }> {
  assertMayManageWebhookEndpoints(actor);
  const url = await vettedUrl(deps, request.url);
  const secret = newSigningSecret();
  const id = newId('webhookEndpoint');
  const endpoint = {
    id,
    organisationId: actor.organisationId,
    mode: actor.mode,
    url,
    enabledEvents: storedEnabledEvents(request.enabled_events),
    secretEncrypted: deps.secretBox.seal(secret, { kind: 'webhook_endpoint', id }),
  };
  const row = await inAuditedTransaction(
    deps,
    audit,
    (tx) => insertWebhookEndpoint(tx, endpoint, deps.clock.now()),
    (created) => ({
      action: 'webhook_endpoint.create',
      objectId: created.id,
      detail: { url: created.url, enabled_events: webhookEndpointView(created).enabled_events },
    }),
  );
  return { ...webhookEndpointView(row), secret };
}

export async function getWebhookEndpoint(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor, rawId: string | undefined): Promise<WebhookEndpoint> {
  return webhookEndpointView(await findVisibleWebhookEndpoint(deps, actor, rawId));
}

/** Oldest first. At most five per mode, so the list is paged in memory. */
export async function getWebhookEndpointList(
  deps: Pick<OrdersApiDeps, 'database'>,
  actor: Actor,
  query: z.infer<typeof ListQuery>,
): Promise<List<WebhookEndpoint>> {
  assertMayManageWebhookEndpoints(actor);
  const rows = await listWebhookEndpoints(deps.database.prisma, actor);
  const start = query.starting_after === undefined ? 0 : rows.findIndex((r) => r.id === query.starting_after) + 1;
  if (start === 0 && query.starting_after !== undefined) {
    throw new AppError('parameter_invalid', `No such webhook endpoint: ${query.starting_after}.`, { param: 'starting_after' });
  }
  const page = rows.slice(start, start + query.limit);
  return { object: 'list', data: page.map(webhookEndpointView), has_more: start + query.limit < rows.length };
}

/** Changes an endpoint the actor may see (`findVisibleWebhookEndpoint`). */
export async function changeWebhookEndpoint(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'addressPolicy'>,
  endpoint: WebhookEndpointRow,
  request: UpdateWebhookEndpointRequest,
  audit?: AuditContext,
): Promise<WebhookEndpoint> {
  const change = {
    ...(request.url === undefined ? {} : { url: await vettedUrl(deps, request.url) }),
    ...(request.enabled_events === undefined ? {} : { enabledEvents: storedEnabledEvents(request.enabled_events) }),
    ...enablementChange(endpoint, request.enabled),
  };
  const updated = await inAuditedTransaction(
    deps,
    audit,
    (tx) => updateWebhookEndpoint(tx, endpoint.id, change),
    () => ({ action: 'webhook_endpoint.update', objectId: endpoint.id, detail: request }),
  );
  return webhookEndpointView(updated);
}

/** Deletes an endpoint the actor may see (`findVisibleWebhookEndpoint`). */
export async function deleteWebhookEndpoint(
  deps: Pick<OrdersApiDeps, 'database' | 'clock'>,
  endpoint: WebhookEndpointRow,
  audit?: AuditContext,
): Promise<{ id: string; object: 'webhook_endpoint'; deleted: true }> {
  await inAuditedTransaction(
    deps,
    audit,
    (tx) => markWebhookEndpointDeleted(tx, endpoint.id, deps.clock.now()),
    () => ({ action: 'webhook_endpoint.delete', objectId: endpoint.id, detail: { url: endpoint.url } }),
  );
  return { id: endpoint.id, object: 'webhook_endpoint', deleted: true };
}

async function vettedUrl(deps: Pick<OrdersApiDeps, 'addressPolicy'>, url: string): Promise<string> {
  return (await vetWebhookUrl(url, deps.addressPolicy, resolveWithSystem)).href;
}
