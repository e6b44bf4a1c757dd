import { WEBHOOK_LIMITS } from '@pmatch/contracts';
import type { PrismaClient } from '@pmatch/db';

/** Rows deleted per table and pass, so a large backlog never holds long locks. */
const BATCH = 5000;

/**
 * Deletes what this service owns once the 30 days of delivery log it keeps have passed: attempts
 * older than that, deliveries finished (not pending) longer ago than that with whatever attempts
 * they still have, and owner e-mails (they point into the log), sent or not. A pending delivery is
 * never deleted: it is still being worked on. Resolves with the number of rows deleted.
 */
export async function deleteExpiredDeliveryLog(prisma: PrismaClient, now: Date): Promise<number> {
  const before = new Date(now.getTime() - WEBHOOK_LIMITS.deliveryLogRetentionMs);
  // One after another: deleting a delivery deletes its attempts too, and two statements deleting
  // the same attempts in different orders could deadlock.
  const attempts = await prisma.$executeRaw`DELETE FROM webhook_delivery_attempts WHERE id IN (
    SELECT id FROM webhook_delivery_attempts WHERE attempted_at < ${before} LIMIT ${BATCH})`;
  const deliveries = await prisma.$executeRaw`DELETE FROM webhook_deliveries WHERE id IN (
    SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < ${before} LIMIT ${BATCH})`;
  const emails = await prisma.$executeRaw`DELETE FROM webhook_emails WHERE id IN (
    SELECT id FROM webhook_emails WHERE created_at < ${before} LIMIT ${BATCH})`;
  return attempts + deliveries + emails;
}
