import type { PrismaClient } from '@pmatch/db';

/** How many test sends of one endpoint are kept; older ones are removed as one is added. */
export const TEST_SENDS_KEPT = 20;

/** How one test event went: its HTTP status or what kept it from being sent, and how long it took. */
export interface TestSend {
  endpointId: string;
  eventId: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  sentAt: Date;
}

/**
 * Records a test send for the endpoint's delivery log on the console, and removes that endpoint's
 * sends beyond the latest TEST_SENDS_KEPT, in one transaction (webhook_test_sends_endpoint_idx).
 */
export async function recordTestSend(prisma: PrismaClient, send: TestSend): Promise<void> {
  await prisma.$transaction([
    prisma.$executeRaw`
      INSERT INTO webhook_test_sends (endpoint_id, event_id, status_code, duration_ms, error, sent_at)
      VALUES (${send.endpointId}, ${send.eventId}, ${send.statusCode}, ${send.durationMs}, ${send.error}, ${send.sentAt})`,
    prisma.$executeRaw`
      DELETE FROM webhook_test_sends WHERE endpoint_id = ${send.endpointId}
        AND id < (SELECT id FROM webhook_test_sends WHERE endpoint_id = ${send.endpointId} ORDER BY id DESC OFFSET ${TEST_SENDS_KEPT - 1} LIMIT 1)`,
  ]);
}
