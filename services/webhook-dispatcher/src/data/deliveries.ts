import { newId, receivesEventType, type DeliveryStatus, type EventRecorded, type Mode } from '@pmatch/contracts';
import { modeOf, type PrismaClient, type Tx } from '@pmatch/db';
import { claimMessage } from '@pmatch/platform';
import { SCHEDULED_ATTEMPTS } from '../domain/retries';

const EVENTS_CONSUMER = 'webhook-dispatcher.events';
const REQUESTS_CONSUMER = 'webhook-dispatcher.requests';

/**
 * Records a received event as one pending delivery per enabled, subscribed endpoint of its
 * organisation and mode, due at once, once per message however often it is redelivered.
 * Returns how many deliveries it created (0 for a message seen before).
 */
export async function recordReceivedEvent(prisma: PrismaClient, message: EventRecorded, messageId: string, now: Date): Promise<number> {
  return prisma.$transaction(async (tx) => {
    if (!(await claimMessage(tx, EVENTS_CONSUMER, messageId))) return 0;
    const endpoints = await tx.webhookEndpoint.findMany({
      where: { organisationId: message.organisation_id, mode: message.mode, enabled: true, deletedAt: null },
      select: { id: true, enabledEvents: true },
    });
    const subscribed = endpoints.filter((e) => receivesEventType(e.enabledEvents, message.type));
    if (subscribed.length === 0) return 0;
    const created = await tx.webhookDelivery.createMany({
      data: subscribed.map((e) => ({
        id: newId('delivery'),
        endpointId: e.id,
        eventId: message.event_id,
        status: 'pending',
        maxAttempts: SCHEDULED_ATTEMPTS,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      })),
      skipDuplicates: true,
    });
    return created.count;
  });
}

/**
 * A resend from the delivery log: the event's delivery to this endpoint is due now and may make
 * one more attempt than it has made. A delivery still in its schedule keeps the rest of it; one
 * that never existed (the event came while the endpoint was off) is created for one attempt.
 * An event deleted by retention meanwhile is not resent. Returns false for a request seen before.
 */
export async function requestResend(prisma: PrismaClient, request: { endpointId: string; eventId: string }, messageId: string, now: Date): Promise<boolean> {
  return prisma.$transaction(async (tx) => {
    if (!(await claimMessage(tx, REQUESTS_CONSUMER, messageId))) return false;
    await tx.$executeRaw`
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
      SELECT ${newId('delivery')}, ${request.endpointId}, e.id, 'pending', 0, 1, ${now}, ${now}, ${now}
      FROM events e WHERE e.id = ${request.eventId}
      ON CONFLICT (endpoint_id, event_id) DO UPDATE SET
        max_attempts = CASE WHEN webhook_deliveries.status = 'pending'
                            THEN GREATEST(webhook_deliveries.max_attempts, webhook_deliveries.attempt_count + 1)
                            ELSE webhook_deliveries.attempt_count + 1 END,
        status = 'pending', next_attempt_at = ${now}, updated_at = ${now}`;
    return true;
  });
}

export interface ClaimedDelivery {
  id: string;
  eventId: string;
  /** Attempts made before this one; the attempt about to be made is number attemptCount + 1. */
  attemptCount: number;
  maxAttempts: number;
  endpoint: {
    id: string;
    organisationId: string;
    mode: Mode;
    url: string;
    secretEncrypted: string;
    previousSecretEncrypted: string | null;
    previousSecretExpiresAt: Date | null;
  };
}

interface DueRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt_count: number;
  max_attempts: number;
}

/**
 * Claims deliveries that are due, oldest first, for at most `limit` attempts and at most
 * `roomFor(endpoint)` per endpoint. Rows are locked FOR UPDATE SKIP LOCKED, so dispatchers never
 * claim the same row at once, and leased by moving next_attempt_at to `leaseUntil`: a dispatcher
 * that dies mid-delivery leaves a delivery that simply falls due again. Deliveries of endpoints
 * switched off or deleted are skipped, never sent.
 */
export async function claimDueDeliveries(
  prisma: PrismaClient,
  now: Date,
  options: { limit: number; leaseUntil: Date; busyEndpoints: string[]; roomFor: (endpointId: string) => number },
): Promise<ClaimedDelivery[]> {
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`
      UPDATE webhook_deliveries d SET status = 'skipped', next_attempt_at = NULL, updated_at = ${now}
      FROM webhook_endpoints e
      WHERE e.id = d.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= ${now}
        AND (NOT e.enabled OR e.deleted_at IS NOT NULL)`;
    const due = await tx.$queryRaw<DueRow[]>`
      SELECT id, endpoint_id, event_id, attempt_count, max_attempts FROM webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at <= ${now} AND NOT (endpoint_id = ANY(${options.busyEndpoints}::text[]))
      ORDER BY next_attempt_at, id
      LIMIT ${options.limit}
      FOR UPDATE SKIP LOCKED`;
    const taken = new Map<string, number>();
    const picked = due.filter((row) => {
      const count = taken.get(row.endpoint_id) ?? 0;
      if (count >= options.roomFor(row.endpoint_id)) return false;
      taken.set(row.endpoint_id, count + 1);
      return true;
    });
    if (picked.length === 0) return [];
    await tx.$executeRaw`
      UPDATE webhook_deliveries SET next_attempt_at = ${options.leaseUntil}, updated_at = ${now}
      WHERE id = ANY(${picked.map((r) => r.id)}::text[])`;
    const endpoints = await tx.webhookEndpoint.findMany({ where: { id: { in: [...taken.keys()] } } });
    const endpointById = new Map(endpoints.map((e) => [e.id, e]));
    return picked.map((row) => {
      const endpoint = endpointById.get(row.endpoint_id)!;
      return {
        id: row.id,
        eventId: row.event_id,
        attemptCount: row.attempt_count,
        maxAttempts: row.max_attempts,
        endpoint: {
          id: endpoint.id,
          organisationId: endpoint.organisationId,
          mode: modeOf(endpoint),
          url: endpoint.url,
          secretEncrypted: endpoint.secretEncrypted,
          previousSecretEncrypted: endpoint.previousSecretEncrypted,
          previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
        },
      };
    });
  });
}

export interface FinishedAttempt {
  deliveryId: string;
  attempt: number;
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/**
 * Writes an attempt to the log and moves its delivery on. Conditional on the delivery still
 * standing where the claim found it: a dispatcher that outlived its lease (another one has made
 * this attempt since) writes nothing. Returns whether it wrote.
 */
export async function finishAttempt(tx: Tx, finished: FinishedAttempt): Promise<boolean> {
  const moved = await tx.$executeRaw`
    UPDATE webhook_deliveries
    SET attempt_count = ${finished.attempt}, status = ${finished.status}, next_attempt_at = ${finished.nextAttemptAt},
        updated_at = ${finished.attemptedAt}
    WHERE id = ${finished.deliveryId} AND status = 'pending' AND attempt_count = ${finished.attempt - 1}`;
  if (moved === 0) return false;
  await tx.webhookDeliveryAttempt.create({
    data: {
      deliveryId: finished.deliveryId,
      attempt: finished.attempt,
      statusCode: finished.statusCode,
      durationMs: finished.durationMs,
      error: finished.error,
      attemptedAt: finished.attemptedAt,
    },
  });
  return true;
}

/** Any acknowledged attempt ends an endpoint's run of failures. */
export async function markEndpointAnswering(tx: Tx, endpointId: string): Promise<void> {
  await tx.$executeRaw`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${endpointId} AND failing_since IS NOT NULL`;
}

export interface FailingEndpoint {
  failingSince: Date;
  enabled: boolean;
  lastFailureEmailAt: Date | null;
  ownerEmail: string;
}

/** Starts (or continues) the endpoint's run of failures; the row lock serialises concurrent attempts. */
export async function markEndpointFailing(tx: Tx, endpointId: string, at: Date): Promise<FailingEndpoint> {
  const [row] = await tx.$queryRaw<{ failing_since: Date; enabled: boolean; last_failure_email_at: Date | null; owner_email: string }[]>`
    UPDATE webhook_endpoints e SET failing_since = COALESCE(e.failing_since, ${at})
    FROM organisations o
    WHERE e.id = ${endpointId} AND o.id = e.organisation_id
    RETURNING e.failing_since, e.enabled, e.last_failure_email_at, o.owner_email`;
  if (row === undefined) throw new Error(`webhook endpoint ${endpointId} vanished`);
  return { failingSince: row.failing_since, enabled: row.enabled, lastFailureEmailAt: row.last_failure_email_at, ownerEmail: row.owner_email };
}

/**
 * Switches an endpoint off for failing, and skips what it still had pending: the spec resends
 * nothing by itself once the endpoint is back, only what the merchant resends from the log.
 */
export async function switchOffFailingEndpoint(tx: Tx, endpointId: string, at: Date): Promise<void> {
  await tx.webhookEndpoint.update({ where: { id: endpointId }, data: { enabled: false, disabledReason: 'failing' } });
  await tx.$executeRaw`
    UPDATE webhook_deliveries SET status = 'skipped', next_attempt_at = NULL, updated_at = ${at}
    WHERE endpoint_id = ${endpointId} AND status = 'pending'`;
}

export async function noteFailureEmailQueued(tx: Tx, endpointId: string, at: Date): Promise<void> {
  await tx.webhookEndpoint.update({ where: { id: endpointId }, data: { lastFailureEmailAt: at } });
}
