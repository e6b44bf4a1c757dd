import { asSql, sql, preparedQuery, type Db, type SqlOrPrisma, type SqlPart, type SqlText } from '@pmatch/db';

/**
 * The INSERT of inbox rows marking messages processed, as a CTE beside their work. `message` gives
 * each one's consumer, id and processing time (the statement's unless given) as SQL; `from` is the
 * rest of the SELECT whose rows are the messages. Rows go in key order, so that two statements
 * cannot deadlock on them; a message processed before is skipped.
 */
export function inboxClaimSql(message: { consumer: SqlPart; messageId: SqlPart; processedAt?: SqlPart }, from: SqlPart = '', returning?: string): SqlText {
  return sql`INSERT INTO inbox (consumer, message_id, processed_at)
   SELECT ${message.consumer}, ${message.messageId}, ${message.processedAt ?? 'now()'} ${from}
   ORDER BY 1, 2
   ON CONFLICT (consumer, message_id) DO NOTHING${returning === undefined ? '' : `\n   RETURNING ${returning}`}`;
}

const claimMessageQuery = preparedQuery<{ consumer: string; messageId: string }>('inbox.claim', (p) =>
  inboxClaimSql({ consumer: p.consumer, messageId: p.messageId }, '', '1'),
);

/**
 * Marks a message as processed by a consumer, in the same DB transaction as its effect (or on its
 * own, for a message that had none). Returns false when it was processed before: the caller then
 * skips the effect and acks.
 */
export async function claimMessage(db: SqlOrPrisma, consumer: string, messageId: string): Promise<boolean> {
  return (await asSql(db).count(claimMessageQuery, { consumer, messageId })) === 1;
}

/**
 * How long a consumer remembers that it processed a message: far longer than any redelivery can
 * come late (a broker redelivery, an outbox row republished after a crash, a dead-lettered message
 * an operator replays), and as long as the events those messages carry are kept.
 */
export const INBOX_RETENTION_MS = 30 * 24 * 3600_000;

/** Rows deleted per pass, so a large backlog never holds long locks. */
const FORGET_BATCH = 5000;

/**
 * Deletes the inbox rows of these consumers processed more than INBOX_RETENTION_MS before `now`;
 * each service forgets only its own consumers' rows. Resolves with the number of rows deleted.
 */
export async function forgetProcessedMessages(db: Db, consumers: readonly string[], now: Date): Promise<number> {
  const before = new Date(now.getTime() - INBOX_RETENTION_MS);
  return db.$executeRaw`DELETE FROM inbox WHERE (consumer, message_id) IN (
    SELECT consumer, message_id FROM inbox
    WHERE consumer = ANY(${[...consumers]}::text[]) AND processed_at < ${before} LIMIT ${FORGET_BATCH})`;
}
