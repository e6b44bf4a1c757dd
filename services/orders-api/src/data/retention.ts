import { asSql, sql, preparedQuery, type Db, type PreparedQuery } from '@pmatch/db';
import { IDEMPOTENCY_KEY_LIFETIME_MS } from '../domain/idempotency';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Events are kept 30 days (docs/guide.md "Limits"). */
export const EVENT_RETENTION_MS = 30 * DAY_MS;
/** Published outbox rows are kept a week for inquiries. */
const PUBLISHED_OUTBOX_RETENTION_MS = 7 * DAY_MS;
/** Rows deleted per table and pass; the sweep runs again at once while a pass finds any. */
export const RETENTION_BATCH = 5000;

/**
 * Of the oldest outbox rows by id (publishing order, near enough), those published before the
 * cutoff: a pass reads one batch, and no index of published_at is needed. A row not yet published
 * waits its turn. The ids go to the DELETE as one array, so that every plan deletes by the pkey.
 */
export const deletePublishedOutbox: PreparedQuery<{ publishedBefore: Date }> = preparedQuery(
  'orders_api.delete_published_outbox',
  (p) => sql`DELETE FROM outbox WHERE id = ANY (ARRAY(
     SELECT id FROM (SELECT id, published_at FROM outbox ORDER BY id LIMIT ${RETENTION_BATCH}) oldest WHERE published_at < ${p.publishedBefore}))`,
);

/**
 * Deletes a batch per table of what orders-api keeps past its retention: events after 30 days
 * (once no delivery refers to them: the dispatcher deletes its log), idempotency keys after 24
 * hours, published outbox rows after a week. Resolves with the number of rows deleted.
 */
export async function deleteExpiredRecords(db: Db, now: Date): Promise<number> {
  const at = (ms: number) => new Date(now.getTime() - ms);
  const counts = await Promise.all([
    db.$executeRaw`DELETE FROM events WHERE id IN (
      SELECT id FROM events e WHERE e.created_at < ${at(EVENT_RETENTION_MS)}
        AND NOT EXISTS (SELECT FROM webhook_deliveries d WHERE d.event_id = e.id)
      LIMIT ${RETENTION_BATCH})`,
    db.$executeRaw`DELETE FROM idempotency_keys WHERE (api_key_id, key) IN (
      SELECT api_key_id, key FROM idempotency_keys WHERE created_at < ${at(IDEMPOTENCY_KEY_LIFETIME_MS)} LIMIT ${RETENTION_BATCH})`,
    asSql(db).count(deletePublishedOutbox, { publishedBefore: at(PUBLISHED_OUTBOX_RETENTION_MS) }),
  ]);
  return counts.reduce((a, b) => a + b, 0);
}
