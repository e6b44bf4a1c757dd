import type { Tx } from '@pmatch/db';

/**
 * Marks a message as processed by a consumer, in the same DB transaction as its effect.
 * Returns false when it was processed before: the caller then skips the effect and acks.
 */
export async function claimMessage(tx: Tx, consumer: string, messageId: string): Promise<boolean> {
  const inserted = await tx.$executeRaw`
    INSERT INTO inbox (consumer, message_id) VALUES (${consumer}, ${messageId})
    ON CONFLICT (consumer, message_id) DO NOTHING`;
  return inserted === 1;
}
