import type { PrismaClient } from '@pmatch/db';

/**
 * What waits to be delivered, as of `now`: deliveries due to enabled endpoints (those of a
 * switched-off endpoint wait for it to be switched back on, and are nobody's backlog), the oldest
 * one's due time, and endpoints switched off for failing.
 */
export interface WebhookBacklog {
  due: number;
  oldestDueAt: Date | null;
  endpointsSwitchedOff: number;
}

/**
 * One statement for the metrics scrape. The due deliveries are read from the partial index of
 * pending ones (webhook_deliveries_endpoint_due_idx), which holds only what is not yet delivered.
 */
export async function readWebhookBacklog(prisma: PrismaClient, now: Date): Promise<WebhookBacklog> {
  const [row] = await prisma.$queryRaw<{ due: number; oldest_due_at: Date | null; switched_off: number }[]>`
    WITH due AS (
      SELECT d.next_attempt_at FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled AND e.deleted_at IS NULL
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${now})
    SELECT (SELECT count(*) FROM due)::int AS due, (SELECT min(next_attempt_at) FROM due) AS oldest_due_at,
           (SELECT count(*) FROM webhook_endpoints WHERE NOT enabled AND disabled_reason = 'failing' AND deleted_at IS NULL)::int AS switched_off`;
  return { due: row?.due ?? 0, oldestDueAt: row?.oldest_due_at ?? null, endpointsSwitchedOff: row?.switched_off ?? 0 };
}
