import { AppError, EXCHANGES, ROUTING_KEYS, WEBHOOK_LIMITS, randomBase62, type Mode, type WebhookRequest } from '@pmatch/contracts';
import { Prisma, enqueue, type Db, type EventRow, type Tx, type WebhookEndpointRow } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import type { DeliveryAttemptRow } from '../domain/webhook-endpoints';
import { scopeOf } from './scope';

export interface NewWebhookEndpoint {
  /** Chosen by the caller: the endpoint's secret is sealed for this id. */
  id: string;
  organisationId: string;
  mode: Mode;
  url: string;
  enabledEvents: string[];
  secretEncrypted: string;
}

/**
 * Inserts an endpoint unless its organisation already has the most allowed in this mode. Creates
 * of one organisation are serialised by a transaction-scoped advisory lock on its id (no row lock,
 * so orders-api needs no UPDATE right on organisations), so two concurrent creates cannot both
 * pass the count.
 */
export async function insertWebhookEndpoint(tx: Tx, endpoint: NewWebhookEndpoint, now: Date): Promise<WebhookEndpointRow> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${endpoint.organisationId}`}, 0))`;
  const existing = await tx.webhookEndpoint.count({
    where: { organisationId: endpoint.organisationId, mode: endpoint.mode, deletedAt: null },
  });
  if (existing >= WEBHOOK_LIMITS.endpointsPerMode) {
    throw new AppError('endpoint_limit_reached', `At most ${WEBHOOK_LIMITS.endpointsPerMode} webhook endpoints per mode; delete one before adding another.`);
  }
  return tx.webhookEndpoint.create({
    data: {
      id: endpoint.id,
      organisationId: endpoint.organisationId,
      mode: endpoint.mode,
      url: endpoint.url,
      secretEncrypted: endpoint.secretEncrypted,
      enabledEvents: endpoint.enabledEvents,
      createdAt: now,
    },
  });
}

/** Endpoints belong to an organisation and mode; a deleted one is gone for the API. */
export async function findWebhookEndpoint(db: Db, scope: Scope, id: string): Promise<WebhookEndpointRow | null> {
  return db.webhookEndpoint.findFirst({ where: { id, organisationId: scope.organisationId, mode: scope.mode, deletedAt: null } });
}

export async function listWebhookEndpoints(db: Db, scope: Scope): Promise<WebhookEndpointRow[]> {
  return db.webhookEndpoint.findMany({
    where: { organisationId: scope.organisationId, mode: scope.mode, deletedAt: null },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

export async function updateWebhookEndpoint(db: Db, id: string, change: Prisma.WebhookEndpointUpdateInput): Promise<WebhookEndpointRow> {
  return db.webhookEndpoint.update({ where: { id }, data: change });
}

export async function markWebhookEndpointDeleted(db: Db, id: string, now: Date): Promise<void> {
  await db.webhookEndpoint.updateMany({ where: { id, deletedAt: null }, data: { deletedAt: now } });
}

/**
 * Makes `secretEncrypted` the signing secret and keeps the one it replaces signing until
 * `replacedExpiresAt`, beside every earlier replaced secret still inside its own overlap (expired
 * ones are dropped). One statement, so two rotations at once cannot lose a secret in between.
 * Returns null, changing nothing, when the endpoint already has the most replaced secrets that may
 * overlap (WEBHOOK_LIMITS.replacedSecretsMax): dropping one would cut its promised 24 hours short.
 */
export async function replaceWebhookSecret(
  db: Db,
  id: string,
  secretEncrypted: string,
  now: Date,
  replacedExpiresAt: Date,
): Promise<WebhookEndpointRow | null> {
  const overlapping = Prisma.sql`(
    SELECT coalesce(jsonb_agg(s ORDER BY s->>'expires_at' DESC), '[]'::jsonb)
    FROM jsonb_array_elements(previous_secrets) s WHERE (s->>'expires_at')::timestamptz > ${now}::timestamptz)`;
  const rotated = await db.$executeRaw`
    UPDATE webhook_endpoints
    SET previous_secrets = jsonb_build_array(jsonb_build_object('secret_encrypted', secret_encrypted, 'expires_at', ${replacedExpiresAt.toISOString()}::text))
                           || ${overlapping},
        secret_encrypted = ${secretEncrypted}
    WHERE id = ${id} AND deleted_at IS NULL AND jsonb_array_length(${overlapping}) < ${WEBHOOK_LIMITS.replacedSecretsMax}`;
  if (rotated === 0) return null;
  return db.webhookEndpoint.findUniqueOrThrow({ where: { id } });
}

/** Hands a request to the dispatcher through the outbox: it alone sends and writes deliveries. */
export async function requestFromDispatcher(db: Db, request: WebhookRequest): Promise<void> {
  await enqueue(db, {
    exchange: EXCHANGES.events,
    routingKey: ROUTING_KEYS.webhookRequested,
    payload: request,
    messageId: `whr_${randomBase62(24)}`,
  });
}

export async function findEventInScope(db: Db, scope: Scope, id: string): Promise<EventRow | null> {
  return db.event.findFirst({ where: { id, ...scopeOf(scope) } });
}

/**
 * The endpoint's delivery log, newest attempt first. Attempts carry their endpoint (migration
 * 20261124040000_delivery_log_by_endpoint), so a page walks this endpoint's attempts alone, newest
 * first; one event's attempts are found through its one delivery to this endpoint, and sorted.
 */
export async function listDeliveryAttempts(
  db: Db,
  endpointId: string,
  query: { eventId?: string; limit: number; beforeAttemptId?: bigint },
): Promise<{ rows: DeliveryAttemptRow[]; hasMore: boolean }> {
  const byEvent =
    query.eventId === undefined
      ? Prisma.empty
      : Prisma.sql`AND a.delivery_id = (SELECT id FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND event_id = ${query.eventId})`;
  const before = query.beforeAttemptId === undefined ? Prisma.empty : Prisma.sql`AND a.id < ${query.beforeAttemptId}`;
  const rows = await db.$queryRaw<DeliveryAttemptRow[]>`
    SELECT a.id, a.attempt, a.status_code, a.duration_ms, a.error, a.attempted_at,
           d.event_id, e.type AS event_type, d.status AS delivery_status
    FROM webhook_delivery_attempts a
    JOIN webhook_deliveries d ON d.id = a.delivery_id
    JOIN events e ON e.id = d.event_id
    WHERE a.endpoint_id = ${endpointId} ${byEvent} ${before}
    ORDER BY a.id DESC
    LIMIT ${query.limit + 1}`;
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}

/** A test event sent to an endpoint, as the dispatcher recorded it. */
export interface TestSendRow {
  id: bigint;
  eventId: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  sentAt: Date;
}

/** The endpoint's latest test sends, newest first (webhook_test_sends_endpoint_idx). */
export async function listTestSends(db: Db, endpointId: string, limit: number): Promise<TestSendRow[]> {
  return db.webhookTestSend.findMany({
    where: { endpointId },
    orderBy: { id: 'desc' },
    take: limit,
    select: { id: true, eventId: true, statusCode: true, durationMs: true, error: true, sentAt: true },
  });
}
