import { asSql, statement, type Db, type SqlOrPrisma } from '@pmatch/db';

/**
 * The inbox row that marks a message processed, as SQL with the placeholders given: it returns a
 * row only when the message is new. For a statement that claims a message together with its work
 * (in a CTE), saving a round trip; `claimMessage` runs it on its own. With `when`, a condition in
 * SQL, the row is written only if it holds. `processedAt` is when the consumer took the message up,
 * for a consumer that read before it writes (the row's time is otherwise the statement's).
 */
export function inboxClaimSql(consumer: string, messageId: string, when = 'true', processedAt = 'now()'): string {
  return `INSERT INTO inbox (consumer, message_id, processed_at) SELECT ${consumer}, ${messageId}, ${processedAt} WHERE ${when}
   ON CONFLICT (consumer, message_id) DO NOTHING RETURNING 1`;
}

const insertProcessed = statement('inbox.claim', inboxClaimSql('$1', '$2'));

/**
 * Marks a message as processed by a consumer, in the same DB transaction as its effect (or on its
 * own, for a message that had none). Returns false when it was processed before: the caller then
 * skips the effect and acks.
 */
export async function claimMessage(db: SqlOrPrisma, consumer: string, messageId: string): Promise<boolean> {
  return (await asSql(db).count(insertProcessed, [consumer, messageId])) === 1;
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
