import { newId } from '@pmatch/contracts';
import { Prisma, type PrismaClient } from '@pmatch/db';
import { OutOfScopeError, claimMessage } from '@pmatch/platform';

export const REQUESTS_CONSUMER = 'webhook-dispatcher.requests';

/**
 * A resend from the delivery log: the event's delivery to this endpoint may make one more attempt,
 * due now (created for one attempt if it never existed; not for an event retention deleted). A
 * delivery whose attempt is in flight keeps its lease and is flagged instead, allowed one attempt
 * beyond it (see `recordFailedAttempt`), so that no outcome is lost. Returns false for a request
 * seen before. An event of another organisation or mode than the endpoint's is never sent to it:
 * OutOfScopeError, nothing written.
 */
export async function requestResend(prisma: PrismaClient, request: { endpointId: string; eventId: string }, messageId: string, now: Date): Promise<boolean> {
  // Never NULL: a delivery waiting for its retry has no lease (leased_until IS NULL), and a NULL
  // here would be written to resend_requested, which is NOT NULL.
  const inFlight = Prisma.sql`(webhook_deliveries.status = 'pending' AND webhook_deliveries.leased_until IS NOT NULL AND webhook_deliveries.leased_until > ${now}::timestamptz)`;
  return prisma.$transaction(async (tx) => {
    const [scope] = await tx.$queryRaw<{ same: boolean }[]>`
      SELECT e.organisation_id = w.organisation_id AND e.mode = w.mode AS same
      FROM events e, webhook_endpoints w WHERE e.id = ${request.eventId} AND w.id = ${request.endpointId}`;
    if (scope !== undefined && !scope.same) {
      throw new OutOfScopeError(`event ${request.eventId} is not of endpoint ${request.endpointId}'s organisation and mode`);
    }
    if (!(await claimMessage(tx, REQUESTS_CONSUMER, messageId))) return false;
    await tx.$executeRaw`
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
      SELECT ${newId('delivery')}, ${request.endpointId}, e.id, 'pending', 0, 1, ${now}, ${now}, ${now}
      FROM events e JOIN webhook_endpoints w ON w.id = ${request.endpointId} AND w.organisation_id = e.organisation_id AND w.mode = e.mode
      WHERE e.id = ${request.eventId}
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
