import type { Db } from '@pmatch/db';

/**
 * Marks a message as processed by a consumer, in the same DB transaction as its effect (or on its
 * own, for a message that had none). Returns false when it was processed before: the caller then
 * skips the effect and acks.
 */
export async function claimMessage(db: Db, consumer: string, messageId: string): Promise<boolean> {
  const inserted = await db.$executeRaw`
    INSERT INTO inbox (consumer, message_id) VALUES (${consumer}, ${messageId})
    ON CONFLICT (consumer, message_id) DO NOTHING`;
  return inserted === 1;
}
