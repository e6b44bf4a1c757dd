import type { PrismaClient } from '@pmatch/db';
import { IDEMPOTENCY_KEY_LIFETIME_MS } from '../domain/idempotency';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Spec "Limits": events and delivery logs are kept 30 days. */
export const EVENT_RETENTION_MS = 30 * DAY_MS;
/** Dedupe rows must outlive any redelivery; published outbox rows are kept a week for inquiries. */
const INBOX_RETENTION_MS = 30 * DAY_MS;
const PUBLISHED_OUTBOX_RETENTION_MS = 7 * DAY_MS;
const BATCH = 5000;

/**
 * Deletes what has outlived its retention, a bounded batch per table and pass so a large backlog
 * never holds long locks. Deliveries and their attempts go with their event (ON DELETE CASCADE).
 * Resolves with the number of rows deleted.
 */
export async function deleteExpiredRecords(prisma: PrismaClient, now: Date): Promise<number> {
  const at = (ms: number) => new Date(now.getTime() - ms);
  const counts = await Promise.all([
    prisma.$executeRaw`DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < ${at(EVENT_RETENTION_MS)} LIMIT ${BATCH})`,
    prisma.$executeRaw`DELETE FROM webhook_delivery_attempts WHERE id IN (
      SELECT id FROM webhook_delivery_attempts WHERE attempted_at < ${at(EVENT_RETENTION_MS)} LIMIT ${BATCH})`,
    prisma.$executeRaw`DELETE FROM idempotency_keys WHERE created_at < ${at(IDEMPOTENCY_KEY_LIFETIME_MS)}`,
    prisma.$executeRaw`DELETE FROM inbox WHERE (consumer, message_id) IN (
      SELECT consumer, message_id FROM inbox WHERE processed_at < ${at(INBOX_RETENTION_MS)} LIMIT ${BATCH})`,
    prisma.$executeRaw`DELETE FROM outbox WHERE id IN (
      SELECT id FROM outbox WHERE published_at < ${at(PUBLISHED_OUTBOX_RETENTION_MS)} LIMIT ${BATCH})`,
  ]);
  return counts.reduce((a, b) => a + b, 0);
}
