import { randomBase62 } from '@pmatch/contracts';
import { sql, preparedQuery, type PrismaClient, type Sql } from '@pmatch/db';
import type { Email } from '../domain/emails';

const queueEmailQuery = preparedQuery<Email & { id: string; endpointId: string; recipient: string; at: Date }>(
  'dispatcher.queue_email',
  (p) => sql`INSERT INTO webhook_emails (id, endpoint_id, kind, recipient, subject, body, next_attempt_at, created_at)
   VALUES (${p.id}, ${p.endpointId}, ${p.kind}, ${p.recipient}, ${p.subject}, ${p.body}, ${p.at}, ${p.at})`,
);

/** Queues an e-mail in the caller's DB transaction, with the state change it reports. */
export async function queueEmail(tx: Sql, email: Email & { endpointId: string; recipient: string }, at: Date): Promise<void> {
  await tx.count(queueEmailQuery, {
    id: `eml_${randomBase62(24)}`,
    endpointId: email.endpointId,
    kind: email.kind,
    recipient: email.recipient,
    subject: email.subject,
    body: email.body,
    at,
  });
}

export interface DueEmail {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  body: string;
  attempt_count: number;
}

/**
 * Claims the oldest unsent e-mail that is due (FOR UPDATE SKIP LOCKED), leasing it for `leaseMs`:
 * a dispatcher that dies while sending leaves it to be sent again later, so a notice is never lost
 * (at worst it arrives twice). One at a time, right before it is sent, so the lease covers exactly
 * one send however long the ones before it took.
 */
export async function claimDueEmail(prisma: PrismaClient, now: Date, leaseMs: number): Promise<DueEmail | null> {
  const [email] = await prisma.$queryRaw<DueEmail[]>`
    UPDATE webhook_emails SET next_attempt_at = ${new Date(now.getTime() + leaseMs)}
    WHERE id = (
      SELECT id FROM webhook_emails WHERE sent_at IS NULL AND next_attempt_at <= ${now}
      ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id, kind, recipient, subject, body, attempt_count`;
  return email ?? null;
}

export async function markEmailSent(prisma: PrismaClient, id: string, at: Date): Promise<void> {
  await prisma.webhookEmail.update({ where: { id }, data: { sentAt: at, nextAttemptAt: null, lastError: null, attemptCount: { increment: 1 } } });
}

export async function markEmailNotSent(prisma: PrismaClient, id: string, error: string, retryAt: Date): Promise<void> {
  await prisma.webhookEmail.update({ where: { id }, data: { lastError: error, nextAttemptAt: retryAt, attemptCount: { increment: 1 } } });
}
