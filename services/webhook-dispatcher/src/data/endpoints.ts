import { modeOf, sql, preparedQuery, type NoValues, type PrismaClient, type Sql } from '@pmatch/db';
import { PENDING_ENDPOINTS, replacedSecretsOf, type ClaimedEndpoint } from './claims';

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

const switchedOffEndpointsQuery = preparedQuery<NoValues, { id: string }>(
  'dispatcher.switched_off_endpoints_with_pending_deliveries',
  sql`WITH RECURSIVE ${PENDING_ENDPOINTS}
   SELECT e.id FROM pending_endpoints p JOIN webhook_endpoints e ON e.id = p.endpoint_id
   WHERE NOT e.enabled OR e.deleted_at IS NOT NULL`,
);

/** Checks again that the endpoint is off: it may have been switched on since. */
const skipDueDeliveriesQuery = preparedQuery<{ endpointId: string; now: Date }>(
  'dispatcher.skip_due_deliveries_of_endpoint',
  (p) => sql`UPDATE webhook_deliveries SET status = 'skipped', next_attempt_at = NULL, leased_until = NULL, resend_requested = false, updated_at = ${p.now}
   WHERE endpoint_id = ${p.endpointId} AND status = 'pending' AND next_attempt_at <= ${p.now}
     AND EXISTS (SELECT FROM webhook_endpoints WHERE id = ${p.endpointId} AND (NOT enabled OR deleted_at IS NOT NULL))`,
);

/**
 * Skips due deliveries of endpoints switched off or deleted, which the claim already passes by:
 * it finds those endpoints among the ones with pending deliveries, then updates each one's by the
 * index, so a poll costs the same however many deliveries the table holds
 * (docs/decisions/0016-queue-statements-find-rows-by-key.md).
 */
export async function skipDeliveriesOfSwitchedOffEndpoints(db: Sql, now: Date): Promise<number> {
  const endpoints = await db.rows(switchedOffEndpointsQuery);
  let skipped = 0;
  for (const { id } of endpoints) skipped += await db.count(skipDueDeliveriesQuery, { endpointId: id, now });
  return skipped;
}

const switchOffEndpointQuery = preparedQuery<{ endpointId: string }>(
  'dispatcher.switch_off_failing_endpoint',
  (p) => sql`UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing' WHERE id = ${p.endpointId}`,
);

const skipPendingDeliveriesQuery = preparedQuery<{ endpointId: string; at: Date }>(
  'dispatcher.skip_pending_deliveries_of_endpoint',
  (p) => sql`UPDATE webhook_deliveries SET status = 'skipped', next_attempt_at = NULL, leased_until = NULL, resend_requested = false, updated_at = ${p.at}
   WHERE endpoint_id = ${p.endpointId} AND status = 'pending'`,
);

/**
 * Switches an endpoint off for failing, and skips what it still had pending: nothing is resent by
 * itself once the endpoint is back, only what the merchant resends from the log.
 */
export async function switchOffFailingEndpoint(tx: Sql, endpointId: string, at: Date): Promise<void> {
  await tx.count(switchOffEndpointQuery, { endpointId });
  await tx.count(skipPendingDeliveriesQuery, { endpointId, at });
}

const noteFailureEmailQueuedQuery = preparedQuery<{ endpointId: string; at: Date }>(
  'dispatcher.note_failure_email_queued',
  (p) => sql`UPDATE webhook_endpoints SET last_failure_email_at = ${p.at} WHERE id = ${p.endpointId}`,
);

export async function noteFailureEmailQueued(tx: Sql, endpointId: string, at: Date): Promise<void> {
  await tx.count(noteFailureEmailQueuedQuery, { endpointId, at });
}
