import type { DeliveryStatus } from '@pmatch/contracts';
import { columns, sql, preparedQuery, type Columns, type Placeholders, type Sql, type SqlPart, type SqlText } from '@pmatch/db';

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

type AcknowledgedColumns = Omit<FinishedAttempt, 'error' | 'retryAt'> & {
  /** The status each delivery must still have: pending (docs/decisions/0016-queue-statements-find-rows-by-key.md). */
  expectedStatus: string;
};

const recordAcknowledgedAttemptsQuery = preparedQuery<Columns<AcknowledgedColumns>, { id: string }>(
  'dispatcher.record_acknowledged_attempts',
  (p) => sql`WITH answered AS (
     SELECT * FROM unnest(${p.deliveryId}::text[], ${p.endpointId}::text[], ${p.attempt}::int[], ${p.leasedUntil}::timestamptz[],
                          ${p.attemptedAt}::timestamptz[], ${p.statusCode}::int[], ${p.durationMs}::int[], ${p.expectedStatus}::text[])
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
 * Records acknowledged attempts in one statement: each one's log line and final status, and the
 * end of its endpoint's run of failures (endpoint rows locked in id order, so that two batches
 * cannot deadlock). Each is written only if its delivery still carries the claim's lease and
 * count of attempts. Returns, per attempt in the order given, whether it was written.
 */
export async function recordAcknowledgedAttempts(db: Sql, attempts: FinishedAttempt[]): Promise<boolean[]> {
  if (attempts.length === 0) return [];
  const acknowledged = attempts.map(({ error, retryAt, ...attempt }): AcknowledgedColumns => ({ ...attempt, expectedStatus: 'pending' }));
  const written = new Set((await db.rows(recordAcknowledgedAttemptsQuery, columns(acknowledged))).map((row) => row.id));
  return attempts.map((a) => written.has(a.deliveryId));
}

export interface FailingEndpoint {
  failingSince: Date;
  enabled: boolean;
  lastFailureEmailAt: Date | null;
  ownerEmail: string;
}

/**
 * Moves the delivery on if it still carries the claim's lease and count of attempts: a dispatcher
 * that outlived its lease writes nothing. `status` and `nextAttemptAt` are the new state, as SQL.
 */
function moveDelivery(p: Placeholders<FinishedAttempt>, status: SqlPart, nextAttemptAt: SqlPart): SqlText {
  return sql`UPDATE webhook_deliveries
     SET attempt_count = ${p.attempt}, status = ${status}, next_attempt_at = ${nextAttemptAt},
         leased_until = NULL, resend_requested = false, updated_at = ${p.attemptedAt}
     WHERE id = ${p.deliveryId} AND status = 'pending' AND attempt_count = ${p.attempt} - 1 AND leased_until = ${p.leasedUntil}
     RETURNING id, status`;
}

interface FailedRow {
  status: DeliveryStatus;
  failing_since: Date | null;
  enabled: boolean | null;
  last_failure_email_at: Date | null;
  owner_email: string | null;
}

const recordFailedAttemptQuery = preparedQuery<FinishedAttempt, FailedRow>('dispatcher.record_failed_attempt', (p) => {
  // A resend asked for while the attempt was in flight makes the next attempt due at once.
  const resendNow = sql`(resend_requested AND max_attempts > ${p.attempt})`;
  return sql`WITH moved AS (${moveDelivery(
    p,
    sql`CASE WHEN ${resendNow} OR ${p.retryAt}::timestamptz IS NOT NULL THEN 'pending' ELSE 'failed' END`,
    sql`CASE WHEN ${resendNow} THEN ${p.attemptedAt}::timestamptz ELSE ${p.retryAt}::timestamptz END`,
  )}),
   logged AS (
     INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error, attempted_at)
     SELECT id, ${p.attempt}::int, ${p.statusCode}::int, ${p.durationMs}::int, ${p.error}::text, ${p.attemptedAt}::timestamptz FROM moved),
   failing AS (
     UPDATE webhook_endpoints e SET failing_since = COALESCE(e.failing_since, ${p.attemptedAt})
     FROM organisations o
     WHERE e.id = ${p.endpointId} AND o.id = e.organisation_id AND EXISTS (SELECT FROM moved)
     RETURNING e.failing_since, e.enabled, e.last_failure_email_at, o.owner_email)
   SELECT m.status, f.failing_since, f.enabled, f.last_failure_email_at, f.owner_email FROM moved m LEFT JOIN failing f ON true`;
});

/**
 * Records a failed attempt in one statement: the log line, the delivery's next due time or final
 * status, and the start of its endpoint's run of failures, which only a 2xx ends (a quiet spell
 * holds no success). Conditional like `recordAcknowledgedAttempts`: null when it wrote nothing,
 * else the delivery's status and the endpoint's state.
 */
export async function recordFailedAttempt(tx: Sql, finished: FinishedAttempt): Promise<{ status: DeliveryStatus; endpoint: FailingEndpoint } | null> {
  const [row] = await tx.rows(recordFailedAttemptQuery, finished);
  if (row === undefined) return null;
  if (row.failing_since === null) throw new Error(`webhook endpoint ${finished.endpointId} vanished`);
  return {
    status: row.status,
    endpoint: { failingSince: row.failing_since, enabled: row.enabled!, lastFailureEmailAt: row.last_failure_email_at, ownerEmail: row.owner_email! },
  };
}
