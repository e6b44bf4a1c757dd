import { WEBHOOK_LIMITS, newId, type DeliveryStatus, type EventRecorded, type Mode } from '@pmatch/contracts';
import { Prisma, modeOf, type EventRow, type PrismaClient, type Tx } from '@pmatch/db';
import { claimMessage } from '@pmatch/platform';
import { SCHEDULED_ATTEMPTS } from '../domain/retries';

const EVENTS_CONSUMER = 'webhook-dispatcher.events';
const REQUESTS_CONSUMER = 'webhook-dispatcher.requests';

/**
 * Records a received event as one pending delivery per enabled, subscribed endpoint of its
 * organisation and mode, due at once, once per message however often it is redelivered.
 * Returns how many deliveries it created (0 for a message seen before).
 *
 * One statement, so one round trip and no interactive transaction: the inbox row and the
 * deliveries commit together. An endpoint receives the type when it selected no types (all) or
 * this one, as `receivesEventType` decides for the API. Delivery ids are made here (`newId`); the
 * statement writes nothing unless there are enough of them for the endpoints it finds, and then
 * says how many it needs, so a race past the registration limit costs one more round.
 */
export async function recordReceivedEvent(prisma: PrismaClient, message: EventRecorded, messageId: string, now: Date): Promise<number> {
  let idCount: number = WEBHOOK_LIMITS.endpointsPerMode;
  for (;;) {
    const ids = Array.from({ length: idCount }, () => newId('delivery'));
    const [result] = await prisma.$queryRaw<{ needed: bigint; created: bigint }[]>`
      WITH subscribed AS (
        SELECT id, row_number() OVER (ORDER BY id) AS n FROM webhook_endpoints
        WHERE organisation_id = ${message.organisation_id} AND mode = ${message.mode} AND enabled AND deleted_at IS NULL
          AND (cardinality(enabled_events) = 0 OR ${message.type} = ANY(enabled_events))),
      enough AS (SELECT count(*) AS needed, count(*) <= ${idCount} AS ok FROM subscribed),
      claimed AS (
        INSERT INTO inbox (consumer, message_id) SELECT ${EVENTS_CONSUMER}::text, ${messageId}::text FROM enough WHERE ok
        ON CONFLICT (consumer, message_id) DO NOTHING
        RETURNING 1),
      created AS (
        INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
        SELECT (${ids}::text[])[s.n::int], s.id, ${message.event_id}::text, 'pending', 0, ${SCHEDULED_ATTEMPTS}::int,
          ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
        FROM subscribed s, claimed
        ON CONFLICT (endpoint_id, event_id) DO NOTHING
        RETURNING 1)
      SELECT needed, (SELECT count(*) FROM created) AS created FROM enough`;
    const needed = Number(result!.needed);
    if (needed <= idCount) return Number(result!.created);
    idCount = needed;
  }
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
  /** Attempts made before this one; the attempt about to be made is number attemptCount + 1. */
  attemptCount: number;
  maxAttempts: number;
  /** Read with the claim, so an attempt needs no query before it sends. */
  event: EventRow;
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

interface ClaimedRow {
  id: string;
  attempt_count: number;
  max_attempts: number;
  event_id: string;
  event_seq: bigint;
  event_organisation_id: string;
  event_mode: string;
  event_bank_account_id: string | null;
  event_type: string;
  event_data: Prisma.JsonValue;
  event_created_at: Date;
  endpoint_id: string;
  organisation_id: string;
  mode: string;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * Claims deliveries that are due, oldest first, for at most `limit` attempts and at most
 * `perEndpoint` in flight per endpoint (counting `inFlight`, which holds this process's attempts
 * per endpoint). Rows are locked FOR UPDATE SKIP LOCKED, so dispatchers never claim the same row
 * at once, and leased by moving next_attempt_at to `leaseUntil`: a dispatcher that dies
 * mid-delivery leaves a delivery that simply falls due again. Deliveries of endpoints switched
 * off or deleted are never claimed (`skipDeliveriesOfSwitchedOffEndpoints` marks them).
 *
 * One statement: lock, pick per endpoint, lease, and read each delivery's endpoint and event.
 */
export async function claimDueDeliveries(
  prisma: PrismaClient,
  now: Date,
  options: { limit: number; leaseUntil: Date; perEndpoint: number; inFlight: ReadonlyMap<string, number> },
): Promise<ClaimedDelivery[]> {
  const busyIds = [...options.inFlight.keys()];
  const busyCounts = [...options.inFlight.values()];
  const full = busyIds.filter((_, i) => busyCounts[i]! >= options.perEndpoint);
  const rows = await prisma.$queryRaw<ClaimedRow[]>`
    WITH due AS (
      SELECT d.id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${now} AND e.enabled AND e.deleted_at IS NULL
        AND NOT (d.endpoint_id = ANY(${full}::text[]))
      ORDER BY d.next_attempt_at, d.id
      LIMIT ${options.limit}
      FOR UPDATE OF d SKIP LOCKED),
    picked AS (
      SELECT r.id, r.next_attempt_at FROM (
        SELECT due.*, row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS nth FROM due
      ) r
      LEFT JOIN unnest(${busyIds}::text[], ${busyCounts}::int[]) AS busy(endpoint_id, in_flight) ON busy.endpoint_id = r.endpoint_id
      WHERE r.nth <= ${options.perEndpoint} - COALESCE(busy.in_flight, 0)),
    leased AS (
      UPDATE webhook_deliveries d SET next_attempt_at = ${options.leaseUntil}, updated_at = ${now}
      FROM picked WHERE d.id = picked.id
      RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.max_attempts, picked.next_attempt_at AS due_at)
    SELECT l.id, l.attempt_count, l.max_attempts,
      ev.id AS event_id, ev.seq AS event_seq, ev.organisation_id AS event_organisation_id, ev.mode AS event_mode,
      ev.bank_account_id AS event_bank_account_id, ev.type AS event_type, ev.data AS event_data, ev.created_at AS event_created_at,
      e.id AS endpoint_id, e.organisation_id, e.mode, e.url, e.secret_encrypted, e.previous_secret_encrypted, e.previous_secret_expires_at
    FROM leased l
    JOIN webhook_endpoints e ON e.id = l.endpoint_id
    JOIN events ev ON ev.id = l.event_id
    ORDER BY l.due_at, l.id`;
  return rows.map((row) => ({
    id: row.id,
    attemptCount: row.attempt_count,
    maxAttempts: row.max_attempts,
    event: {
      id: row.event_id,
      seq: row.event_seq,
      organisationId: row.event_organisation_id,
      mode: row.event_mode,
      bankAccountId: row.event_bank_account_id,
      type: row.event_type,
      data: row.event_data,
      createdAt: row.event_created_at,
    },
    endpoint: {
      id: row.endpoint_id,
      organisationId: row.organisation_id,
      mode: modeOf(row),
      url: row.url,
      secretEncrypted: row.secret_encrypted,
      previousSecretEncrypted: row.previous_secret_encrypted,
      previousSecretExpiresAt: row.previous_secret_expires_at,
    },
  }));
}

/**
 * Skips due deliveries of endpoints switched off or deleted: they are never sent. The claim
 * already passes them by, so this only settles their status, and the periodic poll is often
 * enough for that.
 */
export async function skipDeliveriesOfSwitchedOffEndpoints(prisma: PrismaClient, now: Date): Promise<number> {
  return prisma.$executeRaw`
    UPDATE webhook_deliveries d SET status = 'skipped', next_attempt_at = NULL, updated_at = ${now}
    FROM webhook_endpoints e
    WHERE e.id = d.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= ${now}
      AND (NOT e.enabled OR e.deleted_at IS NOT NULL)`;
}

export interface FinishedAttempt {
  deliveryId: string;
  endpointId: string;
  attempt: number;
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/**
 * Records an acknowledged attempt in one statement: the log line, the delivery's final status,
 * and the end of the endpoint's run of failures (a write only when there was one). Conditional on
 * the delivery still standing where the claim found it: a dispatcher that outlived its lease
 * (another one has made this attempt since) writes nothing. Returns whether it wrote.
 */
export async function recordAcknowledgedAttempt(prisma: PrismaClient, finished: FinishedAttempt): Promise<boolean> {
  const [row] = await prisma.$queryRaw<{ moved: bigint }[]>`
    WITH moved AS (${moveDelivery(finished)}),
    logged AS (${logAttempt(finished)}),
    answering AS (
      UPDATE webhook_endpoints SET failing_since = NULL
      WHERE id = ${finished.endpointId} AND failing_since IS NOT NULL AND EXISTS (SELECT FROM moved))
    SELECT count(*) AS moved FROM moved`;
  return Number(row!.moved) > 0;
}

export interface FailingEndpoint {
  failingSince: Date;
  enabled: boolean;
  lastFailureEmailAt: Date | null;
  ownerEmail: string;
}

/**
 * Records a failed attempt in one statement: the log line, the delivery's next due time or final
 * status, and the start (or continuation) of the endpoint's run of failures, whose row lock
 * serialises concurrent attempts. Conditional like `recordAcknowledgedAttempt`; returns null when
 * it wrote nothing, else the endpoint's state for what follows in the caller's transaction.
 */
export async function recordFailedAttempt(tx: Tx, finished: FinishedAttempt): Promise<FailingEndpoint | null> {
  const [row] = await tx.$queryRaw<{ failing_since: Date | null; enabled: boolean | null; last_failure_email_at: Date | null; owner_email: string | null }[]>`
    WITH moved AS (${moveDelivery(finished)}),
    logged AS (${logAttempt(finished)}),
    failing AS (
      UPDATE webhook_endpoints e SET failing_since = COALESCE(e.failing_since, ${finished.attemptedAt})
      FROM organisations o
      WHERE e.id = ${finished.endpointId} AND o.id = e.organisation_id AND EXISTS (SELECT FROM moved)
      RETURNING e.failing_since, e.enabled, e.last_failure_email_at, o.owner_email)
    SELECT f.failing_since, f.enabled, f.last_failure_email_at, f.owner_email FROM moved LEFT JOIN failing f ON true`;
  if (row === undefined) return null;
  if (row.failing_since === null) throw new Error(`webhook endpoint ${finished.endpointId} vanished`);
  return { failingSince: row.failing_since, enabled: row.enabled!, lastFailureEmailAt: row.last_failure_email_at, ownerEmail: row.owner_email! };
}

/** Moves the delivery on, only if it still stands where the claim found it. */
function moveDelivery(finished: FinishedAttempt): Prisma.Sql {
  return Prisma.sql`
    UPDATE webhook_deliveries
    SET attempt_count = ${finished.attempt}, status = ${finished.status}, next_attempt_at = ${finished.nextAttemptAt},
        updated_at = ${finished.attemptedAt}
    WHERE id = ${finished.deliveryId} AND status = 'pending' AND attempt_count = ${finished.attempt - 1}
    RETURNING id`;
}

/** The attempt's line in the delivery log, written only with the move. */
function logAttempt(finished: FinishedAttempt): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error, attempted_at)
    SELECT id, ${finished.attempt}::int, ${finished.statusCode}::int, ${finished.durationMs}::int, ${finished.error}::text, ${finished.attemptedAt}::timestamptz
    FROM moved`;
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
