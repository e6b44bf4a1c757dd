import { ReplacedSecrets, WEBHOOK_LIMITS, newId, type DeliveryStatus, type EventType, type EventsRecorded, type Mode } from '@pmatch/contracts';
import { Prisma, modeOf, statement, type EventRow, type PrismaClient, type Sql } from '@pmatch/db';
import { claimMessage, inboxClaimSql } from '@pmatch/platform';
import { SCHEDULED_ATTEMPTS } from '../domain/retries';

export const EVENTS_CONSUMER = 'webhook-dispatcher.events';
export const REQUESTS_CONSUMER = 'webhook-dispatcher.requests';

/**
 * Parameters, one array per column with one element per event: event ids, organisation ids,
 * modes, event types; then the consumer, how many delivery ids each event has in $6 (its own
 * slice, in the order given), the delivery ids, attempts scheduled, now.
 */
const receiveEvents = statement(
  'dispatcher.receive_events',
  `WITH received AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY
       AS r(event_id, organisation_id, mode, type, i)),
   subscribed AS (
     SELECT r.i, e.id AS endpoint_id, r.event_id,
            ($7::text[])[((r.i - 1) * $6 + row_number() OVER (PARTITION BY r.i ORDER BY e.id))::int] AS delivery_id
     FROM received r JOIN webhook_endpoints e
       ON e.organisation_id = r.organisation_id AND e.mode = r.mode AND e.enabled AND e.deleted_at IS NULL
      AND (cardinality(e.enabled_events) = 0 OR r.type = ANY(e.enabled_events))),
   enough AS (
     SELECT r.i, r.event_id, count(s.endpoint_id) AS needed
     FROM received r LEFT JOIN subscribed s ON s.i = r.i
     GROUP BY r.i, r.event_id),
   claimed AS (${inboxClaimSql({ consumer: '$5::text', messageId: 'event_id' }, 'FROM enough WHERE needed <= $6', 'message_id AS event_id')}),
   created AS (
     INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
     SELECT s.delivery_id, s.endpoint_id, s.event_id, 'pending', 0, $8::int, $9::timestamptz, $9::timestamptz, $9::timestamptz
     FROM subscribed s JOIN enough USING (i, event_id) JOIN claimed USING (event_id)
     ORDER BY s.endpoint_id, s.event_id
     ON CONFLICT (endpoint_id, event_id) DO NOTHING
     RETURNING id)
   SELECT e.i, e.needed,
          (SELECT count(*) FROM subscribed s JOIN created c ON c.id = s.delivery_id WHERE s.i = e.i) AS created
   FROM enough e ORDER BY e.i`,
);

/**
 * One event of an `event.recorded` message as the dispatcher records it. Its inbox key is the
 * event id: the same key whichever message announced it (a message of several events, or one
 * event alone as versions before 2026-11-24 sent it with the event id as message id), so a
 * redelivery records nothing twice across an upgrade as well.
 */
export interface ReceivedEvent {
  eventId: string;
  organisationId: string;
  mode: Mode;
  type: EventType;
}

/** The events of an `event.recorded` message, in its order. */
export function receivedEvents(message: EventsRecorded): ReceivedEvent[] {
  return message.events.map((e) => ({ eventId: e.event_id, organisationId: message.organisation_id, mode: message.mode, type: e.type }));
}

/**
 * Records received events, any number in one statement: each as one pending delivery per enabled,
 * subscribed endpoint of its organisation and mode, due at once, once per event however often it
 * is redelivered. Returns, per event in the order given, how many deliveries it created (0 for an
 * event seen before).
 *
 * One statement, so one round trip and one commit however many events arrived together, and no
 * interactive transaction: each inbox row and its deliveries commit together. An endpoint receives
 * the type when it selected no types (all) or this one, as `receivesEventType` decides for the
 * API. Delivery ids are made here (`newId`), a slice per event; an event finding more endpoints
 * than its slice holds (a race past the registration limit) writes nothing and goes again in one
 * more round with slices as large as it needs. An event given twice is recorded once and the
 * second answers 0, as its redelivery would. Inbox rows and deliveries are inserted in key order,
 * so two dispatchers' batches cannot deadlock on them.
 */
export async function recordReceivedEvents(sql: Sql, received: ReceivedEvent[], now: Date): Promise<number[]> {
  const created = received.map(() => 0);
  const firstOf = new Map<string, number>();
  received.forEach((r, i) => {
    if (!firstOf.has(r.eventId)) firstOf.set(r.eventId, i);
  });
  let waiting = [...firstOf.values()];
  let idsEach: number = WEBHOOK_LIMITS.endpointsPerMode;
  while (waiting.length > 0) {
    const batch = waiting.map((i) => received[i]!);
    const rows = await sql.rows<{ i: bigint; needed: bigint; created: bigint }>(receiveEvents, [
      batch.map((r) => r.eventId),
      batch.map((r) => r.organisationId),
      batch.map((r) => r.mode),
      batch.map((r) => r.type),
      EVENTS_CONSUMER,
      idsEach,
      Array.from({ length: batch.length * idsEach }, () => newId('delivery')),
      SCHEDULED_ATTEMPTS,
      now,
    ]);
    const short: number[] = [];
    let mostNeeded = 0;
    for (const row of rows) {
      const index = waiting[Number(row.i) - 1]!;
      const needed = Number(row.needed);
      if (needed <= idsEach) created[index] = Number(row.created);
      else {
        short.push(index);
        mostNeeded = Math.max(mostNeeded, needed);
      }
    }
    waiting = short;
    idsEach = mostNeeded;
  }
  return created;
}

/**
 * A resend from the delivery log: the event's delivery to this endpoint may make one more attempt
 * than it has made, due now. A delivery still in its schedule keeps the rest of it; one that never
 * existed (the event came while the endpoint was off) is created for one attempt. An event deleted
 * by retention meanwhile is not resent. Returns false for a request seen before.
 *
 * A delivery whose attempt is in flight (leased, the lease still running) keeps its lease: making
 * it due now would send a second attempt beside the first, and one of the two outcomes would be
 * lost. It is flagged instead and allowed one attempt beyond the one in flight, which falls due at
 * once if the one in flight fails (see `moveDelivery`).
 */
export async function requestResend(prisma: PrismaClient, request: { endpointId: string; eventId: string }, messageId: string, now: Date): Promise<boolean> {
  const inFlight = Prisma.sql`(webhook_deliveries.status = 'pending' AND webhook_deliveries.leased_until > ${now}::timestamptz)`;
  return prisma.$transaction(async (tx) => {
    if (!(await claimMessage(tx, REQUESTS_CONSUMER, messageId))) return false;
    await tx.$executeRaw`
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
      SELECT ${newId('delivery')}, ${request.endpointId}, e.id, 'pending', 0, 1, ${now}, ${now}, ${now}
      FROM events e WHERE e.id = ${request.eventId}
      ON CONFLICT (endpoint_id, event_id) DO UPDATE SET
        max_attempts = CASE
          WHEN ${inFlight} THEN GREATEST(webhook_deliveries.max_attempts, webhook_deliveries.attempt_count + 2)
          WHEN webhook_deliveries.status = 'pending' THEN GREATEST(webhook_deliveries.max_attempts, webhook_deliveries.attempt_count + 1)
          ELSE webhook_deliveries.attempt_count + 1 END,
        resend_requested = ${inFlight},
        next_attempt_at = CASE WHEN ${inFlight} THEN webhook_deliveries.next_attempt_at ELSE ${now}::timestamptz END,
        status = 'pending',
        updated_at = ${now}`;
    return true;
  });
}

export interface ClaimedDelivery {
  id: string;
  /** Attempts made before this one; the attempt about to be made is number attemptCount + 1. */
  attemptCount: number;
  maxAttempts: number;
  /** The lease this claim holds; the outcome is written only while the delivery still carries it. */
  leasedUntil: Date;
  /** Read with the claim, so an attempt needs no query before it sends. */
  event: EventRow;
  endpoint: ClaimedEndpoint;
}

export interface ClaimedEndpoint {
  id: string;
  organisationId: string;
  mode: Mode;
  url: string;
  secretEncrypted: string;
  /** Replaced secrets (sealed) and when each stops signing. */
  replacedSecrets: { secretEncrypted: string; expiresAt: Date }[];
}

interface ClaimedRow {
  id: string;
  attempt_count: number;
  max_attempts: number;
  leased_until: Date;
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
  previous_secrets: Prisma.JsonValue;
}

/** What this process may still start for one endpoint, as the scheduler judges it. */
export interface EndpointShare {
  endpointId: string;
  /** More attempts it may start now (0: none). */
  allowance: number;
  /** Attempts of it in flight in this process: endpoints with fewer come first. */
  inFlight: number;
  /** Whether it counts against the share of slots that slow endpoints may hold. */
  slow: boolean;
}

export interface ClaimLimits {
  leaseUntil: Date;
  /** Free slots of this process. */
  free: number;
  /** How many of them slow endpoints may take. */
  slowFree: number;
  /** Endpoints the scheduler knows (in flight or seen answering); any other gets `unknownAllowance`. */
  known: readonly EndpointShare[];
  unknownAllowance: number;
}

/**
 * A recursive CTE, `pending_endpoints(endpoint_id)`: the endpoints with pending deliveries, found
 * by skipping from one endpoint to the next in webhook_deliveries_endpoint_due_idx (one index
 * probe per endpoint, and a last row of NULL), however many deliveries each has waiting.
 */
const PENDING_ENDPOINTS = `pending_endpoints(endpoint_id) AS (
     (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
     UNION ALL
     SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
             WHERE d.status = 'pending' AND d.endpoint_id > p.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
     FROM pending_endpoints p WHERE p.endpoint_id IS NOT NULL)`;

/**
 * Parameters: the known endpoints' ids, allowances, attempts in flight and slowness (four arrays
 * in step), now, the allowance of an unknown endpoint, slow free, free, lease until.
 */
const claimDue = statement(
  'dispatcher.claim_due_deliveries',
  `WITH RECURSIVE known AS (
     SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::boolean[]) AS k(endpoint_id, allowance, in_flight, slow)),
   ${PENDING_ENDPOINTS},
   candidates AS (
     SELECT e.id, COALESCE(k.allowance, $6::int) AS allowance,
            COALESCE(k.in_flight, 0) AS in_flight, COALESCE(k.slow, false) AS slow
     FROM pending_endpoints p
     JOIN webhook_endpoints e ON e.id = p.endpoint_id AND e.enabled AND e.deleted_at IS NULL
     LEFT JOIN known k ON k.endpoint_id = e.id
     WHERE COALESCE(k.allowance, $6::int) > 0),
   offered AS (
     SELECT o.id, c.id AS endpoint_id, o.next_attempt_at, c.slow, c.in_flight + o.nth AS turn
     FROM candidates c CROSS JOIN LATERAL (
       SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS nth
       FROM (SELECT id, next_attempt_at FROM webhook_deliveries
             WHERE endpoint_id = c.id AND status = 'pending' AND next_attempt_at <= $5
             ORDER BY next_attempt_at, id LIMIT c.allowance) d) o),
   ranked AS (
     SELECT id, endpoint_id, next_attempt_at, turn, slow,
            count(*) FILTER (WHERE slow) OVER (ORDER BY turn, next_attempt_at, id) AS slow_nth
     FROM offered),
   picked AS (
     SELECT id, endpoint_id, next_attempt_at FROM ranked WHERE NOT slow OR slow_nth <= $7
     ORDER BY turn, next_attempt_at, id LIMIT $8),
   locked AS (
     SELECT l.id, l.due_at FROM picked p CROSS JOIN LATERAL (
       SELECT d.id, d.next_attempt_at AS due_at FROM webhook_deliveries d
       WHERE d.id = p.id AND d.endpoint_id = p.endpoint_id AND d.next_attempt_at = p.next_attempt_at AND d.status = 'pending'
       FOR UPDATE SKIP LOCKED) l),
   leased AS (
     UPDATE webhook_deliveries d SET next_attempt_at = $9, leased_until = $9, updated_at = $5
     FROM locked WHERE d.id = locked.id
     RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.max_attempts, d.leased_until, locked.due_at)
   SELECT l.id, l.attempt_count, l.max_attempts, l.leased_until,
     ev.id AS event_id, ev.seq AS event_seq, ev.organisation_id AS event_organisation_id, ev.mode AS event_mode,
     ev.bank_account_id AS event_bank_account_id, ev.type AS event_type, ev.data AS event_data, ev.created_at AS event_created_at,
     e.id AS endpoint_id, e.organisation_id, e.mode, e.url, e.secret_encrypted, e.previous_secrets
   FROM leased l
   JOIN webhook_endpoints e ON e.id = l.endpoint_id
   JOIN events ev ON ev.id = l.event_id
   ORDER BY l.due_at, l.id`,
);

/**
 * Claims due deliveries fairly: each endpoint offers at most its allowance of its oldest due
 * deliveries (so one endpoint's backlog can never crowd another's out of a pass), and the offers
 * are taken round-robin, every endpoint's next delivery before any endpoint's one after it, the
 * endpoint with the fewest attempts in flight first, then oldest first, up to `free`, with slow
 * endpoints taking at most `slowFree`. Deliveries of endpoints switched off or deleted are never
 * claimed (`skipDeliveriesOfSwitchedOffEndpoints` marks them).
 *
 * Claimed rows are locked FOR UPDATE SKIP LOCKED, so dispatchers never claim the same row at
 * once (a row another dispatcher holds is just left out of this pass), and leased: next_attempt_at
 * and leased_until move to `leaseUntil`. A dispatcher that dies mid-delivery leaves a delivery that
 * simply falls due again, and its late write of the outcome is refused (see `moveDelivery`).
 *
 * One statement: pick per endpoint, lock, lease, and read each delivery's endpoint and event.
 * The endpoints with something due are found by skipping from one endpoint to the next in
 * webhook_deliveries_endpoint_due_idx, two index probes per endpoint with pending deliveries,
 * so a pass costs the same with 10 or 100,000 deliveries waiting (it used to read every due row).
 * Every step after that is driven by the rows before it (LATERAL, each with a LIMIT or a full key),
 * never a join PostgreSQL may choose to make by reading all due deliveries: with statistics
 * gathered in a quiet spell, which count next to no pending rows, it believes that index empty and
 * such a read free, and under the rush that follows every claim read the whole backlog (100 ms a
 * claim with 4,000 deliveries due, against 2 ms). A delivery is locked by its id, endpoint and due
 * time, so that even a plan through that index finds it by its key.
 */
export async function claimDueDeliveries(sql: Sql, now: Date, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  if (limits.free <= 0) return [];
  const known = limits.known;
  const rows = await sql.rows<ClaimedRow>(claimDue, [
    known.map((k) => k.endpointId),
    known.map((k) => k.allowance),
    known.map((k) => k.inFlight),
    known.map((k) => k.slow),
    now,
    limits.unknownAllowance,
    limits.slowFree,
    limits.free,
    limits.leaseUntil,
  ]);
  return rows.map((row) => ({
    id: row.id,
    attemptCount: row.attempt_count,
    maxAttempts: row.max_attempts,
    leasedUntil: row.leased_until,
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
      replacedSecrets: replacedSecretsOf(row.previous_secrets),
    },
  }));
}

/** webhook_endpoints.previous_secrets as the dispatcher uses it. */
export function replacedSecretsOf(stored: Prisma.JsonValue): ClaimedEndpoint['replacedSecrets'] {
  return ReplacedSecrets.parse(stored).map((r) => ({ secretEncrypted: r.secret_encrypted, expiresAt: new Date(r.expires_at) }));
}

/** An endpoint as a test event needs it, or null when it is deleted. */
export async function findEndpointForTestEvent(prisma: PrismaClient, endpointId: string): Promise<ClaimedEndpoint | null> {
  const row = await prisma.webhookEndpoint.findFirst({ where: { id: endpointId, deletedAt: null } });
  if (row === null) return null;
  return {
    id: row.id,
    organisationId: row.organisationId,
    mode: modeOf(row),
    url: row.url,
    secretEncrypted: row.secretEncrypted,
    replacedSecrets: replacedSecretsOf(row.previousSecrets),
  };
}

/** No parameters. */
const switchedOffWithPending = statement(
  'dispatcher.switched_off_endpoints_with_pending_deliveries',
  `WITH RECURSIVE ${PENDING_ENDPOINTS}
   SELECT e.id FROM pending_endpoints p JOIN webhook_endpoints e ON e.id = p.endpoint_id
   WHERE NOT e.enabled OR e.deleted_at IS NOT NULL`,
);

/** Parameters: endpoint id, now. Checks again that the endpoint is off: it may have been switched on since. */
const skipDueOfEndpoint = statement(
  'dispatcher.skip_due_deliveries_of_endpoint',
  `UPDATE webhook_deliveries SET status = 'skipped', next_attempt_at = NULL, leased_until = NULL, resend_requested = false, updated_at = $2
   WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at <= $2
     AND EXISTS (SELECT FROM webhook_endpoints WHERE id = $1 AND (NOT enabled OR deleted_at IS NOT NULL))`,
);

/**
 * Skips due deliveries of endpoints switched off or deleted: they are never sent. The claim
 * already passes them by, so this only settles their status, and the periodic poll is often
 * enough for that. It finds those endpoints among the ones with pending deliveries (nearly always
 * none) and updates each one's due deliveries by the index, so a poll costs the same however
 * many deliveries the table holds. As one join its plan hung on the statistics: planned when few
 * deliveries were pending, it walked every pending delivery at every poll once many were.
 */
export async function skipDeliveriesOfSwitchedOffEndpoints(sql: Sql, now: Date): Promise<number> {
  const endpoints = await sql.rows<{ id: string }>(switchedOffWithPending);
  let skipped = 0;
  for (const { id } of endpoints) skipped += await sql.count(skipDueOfEndpoint, [id, now]);
  return skipped;
}

export interface FinishedAttempt {
  deliveryId: string;
  endpointId: string;
  attempt: number;
  /** The claim's lease: the outcome is written only if the delivery still carries it. */
  leasedUntil: Date;
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** For a failure: when the schedule wants the next attempt, or null when it has none left. */
  retryAt: Date | null;
}

/**
 * The parameters of the statement that records a failed attempt, but for its retry time: delivery
 * id, endpoint id, attempt, lease, attempted at, status code, duration, error.
 */
function attemptValues(finished: FinishedAttempt): unknown[] {
  return [
    finished.deliveryId,
    finished.endpointId,
    finished.attempt,
    finished.leasedUntil,
    finished.attemptedAt,
    finished.statusCode,
    finished.durationMs,
    finished.error,
  ];
}

/**
 * Moves the delivery on, only if it still carries this claim's lease and count of attempts: a
 * dispatcher that outlived its lease (another one has claimed the delivery since) writes nothing.
 * `status` and `nextAttemptAt` are the SQL of the delivery's new state.
 */
function moveDelivery(status: string, nextAttemptAt: string): string {
  return `UPDATE webhook_deliveries
     SET attempt_count = $3, status = ${status}, next_attempt_at = ${nextAttemptAt},
         leased_until = NULL, resend_requested = false, updated_at = $5
     WHERE id = $1 AND status = 'pending' AND attempt_count = $3 - 1 AND leased_until = $4
     RETURNING id, status`;
}

/** The attempt's line in the delivery log, written only with the move. */
const LOG_ATTEMPT = `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error, attempted_at)
     SELECT id, $3::int, $6::int, $7::int, $8::text, $5::timestamptz FROM moved`;

/**
 * Parameters, one array per column with one element per attempt: delivery ids, endpoint ids,
 * attempts, leases, attempted at, status codes, durations, and the status each delivery must
 * still have (pending). That status comes with the rows, not as a constant in the text: a constant
 * would let the generic plan find the deliveries through webhook_deliveries_endpoint_due_idx,
 * which holds only pending ones, and on statistics gathered while next to none were pending it
 * read that whole index for every batch (the backlog of a rush) instead of probing by key.
 */
const recordAcknowledged = statement(
  'dispatcher.record_acknowledged_attempts',
  `WITH answered AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[], $6::int[], $7::int[], $8::text[])
       AS a(delivery_id, endpoint_id, attempt, leased_until, attempted_at, status_code, duration_ms, status)),
   moved AS (
     UPDATE webhook_deliveries d
     SET attempt_count = a.attempt, status = 'succeeded', next_attempt_at = NULL,
         leased_until = NULL, resend_requested = false, updated_at = a.attempted_at
     FROM answered a
     WHERE d.id = a.delivery_id AND d.status = a.status AND d.attempt_count = a.attempt - 1 AND d.leased_until = a.leased_until
     RETURNING d.id, d.endpoint_id, a.attempt, a.status_code, a.duration_ms, a.attempted_at),
   logged AS (
     INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error, attempted_at)
     SELECT id, attempt, status_code, duration_ms, NULL, attempted_at FROM moved),
   failing AS (
     SELECT id FROM webhook_endpoints
     WHERE id IN (SELECT endpoint_id FROM moved) AND failing_since IS NOT NULL
     ORDER BY id FOR UPDATE),
   answering AS (
     UPDATE webhook_endpoints SET failing_since = NULL WHERE id IN (SELECT id FROM failing))
   SELECT id FROM moved`,
);

/**
 * Records acknowledged attempts, any number in one statement: each one's log line and final
 * status, and the end of its endpoint's run of failures (a write only where there was one; those
 * endpoint rows are locked in id order, so two dispatchers' batches cannot deadlock on them). Each
 * is conditional on its delivery still carrying the claim's lease (see `moveDelivery`). Returns,
 * per attempt in the order given, whether it was written.
 */
export async function recordAcknowledgedAttempts(sql: Sql, attempts: FinishedAttempt[]): Promise<boolean[]> {
  const written = await sql.rows<{ id: string }>(recordAcknowledged, [
    attempts.map((a) => a.deliveryId),
    attempts.map((a) => a.endpointId),
    attempts.map((a) => a.attempt),
    attempts.map((a) => a.leasedUntil),
    attempts.map((a) => a.attemptedAt),
    attempts.map((a) => a.statusCode),
    attempts.map((a) => a.durationMs),
    attempts.map(() => 'pending'),
  ]);
  const writtenIds = new Set(written.map((row) => row.id));
  return attempts.map((a) => writtenIds.has(a.deliveryId));
}

export interface FailingEndpoint {
  failingSince: Date;
  enabled: boolean;
  lastFailureEmailAt: Date | null;
  ownerEmail: string;
}

/**
 * A failure follows the schedule, unless a resend came while the attempt was in flight: then the
 * next attempt is due at once.
 */
const RESEND_NOW = '(resend_requested AND max_attempts > $3)';

const recordFailed = statement(
  'dispatcher.record_failed_attempt',
  `WITH moved AS (${moveDelivery(
    `CASE WHEN ${RESEND_NOW} OR $9::timestamptz IS NOT NULL THEN 'pending' ELSE 'failed' END`,
    `CASE WHEN ${RESEND_NOW} THEN $5::timestamptz ELSE $9::timestamptz END`,
  )}),
   logged AS (${LOG_ATTEMPT}),
   failing AS (
     UPDATE webhook_endpoints e SET failing_since = COALESCE(e.failing_since, $5)
     FROM organisations o
     WHERE e.id = $2 AND o.id = e.organisation_id AND EXISTS (SELECT FROM moved)
     RETURNING e.failing_since, e.enabled, e.last_failure_email_at, o.owner_email)
   SELECT m.status, f.failing_since, f.enabled, f.last_failure_email_at, f.owner_email FROM moved m LEFT JOIN failing f ON true`,
);

/**
 * Records a failed attempt in one statement: the log line, the delivery's next due time or final
 * status, and the start (or continuation) of the endpoint's run of failures, whose row lock
 * serialises concurrent attempts. Conditional like `recordAcknowledgedAttempts`; returns null when
 * it wrote nothing, else the delivery's status now and the endpoint's state for what follows in
 * the caller's transaction.
 *
 * The run of failures starts at the first failure after the last success (or after the endpoint
 * was switched on by hand) and only a 2xx ends it. A quiet spell without attempts does not reset
 * it: the spec switches an endpoint off "when only failures occur for 72 hours", and a time in
 * which nothing was delivered held no success; every failure in it was already reported by e-mail.
 */
export async function recordFailedAttempt(tx: Sql, finished: FinishedAttempt): Promise<{ status: DeliveryStatus; endpoint: FailingEndpoint } | null> {
  const [row] = await tx.rows<{
    status: DeliveryStatus;
    failing_since: Date | null;
    enabled: boolean | null;
    last_failure_email_at: Date | null;
    owner_email: string | null;
  }>(recordFailed, [...attemptValues(finished), finished.retryAt]);
  if (row === undefined) return null;
  if (row.failing_since === null) throw new Error(`webhook endpoint ${finished.endpointId} vanished`);
  return {
    status: row.status,
    endpoint: { failingSince: row.failing_since, enabled: row.enabled!, lastFailureEmailAt: row.last_failure_email_at, ownerEmail: row.owner_email! },
  };
}

/** Parameters: endpoint id. */
const switchOffEndpoint = statement(
  'dispatcher.switch_off_failing_endpoint',
  `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing' WHERE id = $1`,
);

/** Parameters: endpoint id, at. */
const skipPendingOfEndpoint = statement(
  'dispatcher.skip_pending_deliveries_of_endpoint',
  `UPDATE webhook_deliveries SET status = 'skipped', next_attempt_at = NULL, leased_until = NULL, resend_requested = false, updated_at = $2
   WHERE endpoint_id = $1 AND status = 'pending'`,
);

/**
 * Switches an endpoint off for failing, and skips what it still had pending: the spec resends
 * nothing by itself once the endpoint is back, only what the merchant resends from the log.
 */
export async function switchOffFailingEndpoint(tx: Sql, endpointId: string, at: Date): Promise<void> {
  await tx.count(switchOffEndpoint, [endpointId]);
  await tx.count(skipPendingOfEndpoint, [endpointId, at]);
}

/** Parameters: endpoint id, at. */
const noteFailureEmail = statement('dispatcher.note_failure_email_queued', `UPDATE webhook_endpoints SET last_failure_email_at = $2 WHERE id = $1`);

export async function noteFailureEmailQueued(tx: Sql, endpointId: string, at: Date): Promise<void> {
  await tx.count(noteFailureEmail, [endpointId, at]);
}
