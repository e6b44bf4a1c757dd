import { ReplacedSecrets, type Mode } from '@pmatch/contracts';
import { modeOf, sql, preparedQuery, type Columns, type EventRow, type Prisma, type Sql } from '@pmatch/db';

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
export const PENDING_ENDPOINTS = `pending_endpoints(endpoint_id) AS (
     (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
     UNION ALL
     SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
             WHERE d.status = 'pending' AND d.endpoint_id > p.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
     FROM pending_endpoints p WHERE p.endpoint_id IS NOT NULL)`;

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

type ClaimDueDeliveriesValues = Columns<EndpointShare> & Omit<ClaimLimits, 'known'> & { now: Date };

const claimDueDeliveriesQuery = preparedQuery<ClaimDueDeliveriesValues, ClaimedRow>(
  'dispatcher.claim_due_deliveries',
  (p) => sql`WITH RECURSIVE known AS (
     SELECT * FROM unnest(${p.endpointId}::text[], ${p.allowance}::int[], ${p.inFlight}::int[], ${p.slow}::boolean[]) AS k(endpoint_id, allowance, in_flight, slow)),
   ${PENDING_ENDPOINTS},
   candidates AS (
     SELECT e.id, COALESCE(k.allowance, ${p.unknownAllowance}::int) AS allowance,
            COALESCE(k.in_flight, 0) AS in_flight, COALESCE(k.slow, false) AS slow
     FROM pending_endpoints p
     JOIN webhook_endpoints e ON e.id = p.endpoint_id AND e.enabled AND e.deleted_at IS NULL
     LEFT JOIN known k ON k.endpoint_id = e.id
     WHERE COALESCE(k.allowance, ${p.unknownAllowance}::int) > 0),
   offered AS (
     SELECT o.id, c.id AS endpoint_id, o.next_attempt_at, c.slow, c.in_flight + o.nth AS turn
     FROM candidates c CROSS JOIN LATERAL (
       SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS nth
       FROM (SELECT id, next_attempt_at FROM webhook_deliveries
             WHERE endpoint_id = c.id AND status = 'pending' AND next_attempt_at <= ${p.now}
             ORDER BY next_attempt_at, id LIMIT c.allowance) d) o),
   ranked AS (
     SELECT id, endpoint_id, next_attempt_at, turn, slow,
            count(*) FILTER (WHERE slow) OVER (ORDER BY turn, next_attempt_at, id) AS slow_nth
     FROM offered),
   picked AS (
     SELECT id, endpoint_id, next_attempt_at FROM ranked WHERE NOT slow OR slow_nth <= ${p.slowFree}
     ORDER BY turn, next_attempt_at, id LIMIT ${p.free}),
   locked AS (
     SELECT l.id, l.due_at FROM picked p CROSS JOIN LATERAL (
       SELECT d.id, d.next_attempt_at AS due_at FROM webhook_deliveries d
       WHERE d.id = p.id AND d.endpoint_id = p.endpoint_id AND d.next_attempt_at = p.next_attempt_at AND d.status = 'pending'
       FOR UPDATE SKIP LOCKED) l),
   leased AS (
     UPDATE webhook_deliveries d SET next_attempt_at = ${p.leaseUntil}, leased_until = ${p.leaseUntil}, updated_at = ${p.now}
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
 * Claims due deliveries fairly, in one statement: each endpoint offers at most its allowance of
 * its oldest due deliveries, taken round-robin (fewest in flight first, then oldest) up to `free`,
 * slow endpoints up to `slowFree`; never those of endpoints switched off or deleted. Claimed rows
 * are locked SKIP LOCKED and leased until `leaseUntil`, and come with their endpoint and event.
 * See docs/decisions/0027-deliveries-claimed-with-leases.md.
 */
export async function claimDueDeliveries(db: Sql, now: Date, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  if (limits.free <= 0) return [];
  const { known, leaseUntil, free, slowFree, unknownAllowance } = limits;
  const rows = await db.rows(claimDueDeliveriesQuery, {
    endpointId: known.map((k) => k.endpointId),
    allowance: known.map((k) => k.allowance),
    inFlight: known.map((k) => k.inFlight),
    slow: known.map((k) => k.slow),
    now,
    unknownAllowance,
    slowFree,
    free,
    leaseUntil,
  });
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
