import { randomBase62 } from '@pmatch/contracts';
import type { Db } from '@pmatch/db';
import type { ConsoleEmail } from '../domain/console-emails';

/**
 * Queues an e-mail in the webhook dispatcher's e-mail queue, in the caller's transaction: the
 * dispatcher sends it (SMTP, or an .eml file in development) with its own retries. orders-api may
 * add to the queue and never reads it back.
 */
export async function queueConsoleEmail(db: Db, email: ConsoleEmail, now: Date): Promise<void> {
  await db.$executeRaw`
    INSERT INTO webhook_emails (id, endpoint_id, kind, recipient, subject, body, next_attempt_at, created_at)
    VALUES (${`eml_${randomBase62(24)}`}, NULL, ${email.kind}, ${email.recipient}, ${email.subject}, ${email.body}, ${now}, ${now})`;
}
