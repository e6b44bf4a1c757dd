import { WEBHOOK_LIMITS, randomBase62 } from '@pmatch/contracts';
import type { PrismaClient, Tx } from '@pmatch/db';
import type { Email } from '../domain/emails';

/** Queues an e-mail in the caller's DB transaction, with the state change it reports. */
export async function queueEmail(tx: Tx, email: Email & { endpointId: string; recipient: string }, at: Date): Promise<void> {
  await tx.webhookEmail.create({
    data: {
      id: `eml_${randomBase62(24)}`,
      endpointId: email.endpointId,
      kind: email.kind,
      recipient: email.recipient,
      subject: email.subject,
      body: email.body,
      nextAttemptAt: at,
      createdAt: at,
    },
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
 * Claims unsent e-mails that are due (FOR UPDATE SKIP LOCKED), leasing each for `leaseMs`: a
 * dispatcher that dies while sending leaves it to be sent again later, so a notice is never lost
 * (at worst it arrives twice).
 */
export async function claimDueEmails(prisma: PrismaClient, now: Date, limit: number, leaseMs: number): Promise<DueEmail[]> {
  return prisma.$transaction(async (tx) => {
    const due = await tx.$queryRaw<DueEmail[]>`
      SELECT id, kind, recipient, subject, body, attempt_count FROM webhook_emails
      WHERE sent_at IS NULL AND next_attempt_at <= ${now}
      ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
    if (due.length > 0) {
      await tx.$executeRaw`
        UPDATE webhook_emails SET next_attempt_at = ${new Date(now.getTime() + leaseMs)}
        WHERE id = ANY(${due.map((e) => e.id)}::text[])`;
    }
    return due;
  });
}

export async function markEmailSent(prisma: PrismaClient, id: string, at: Date): Promise<void> {
  await prisma.webhookEmail.update({ where: { id }, data: { sentAt: at, nextAttemptAt: null, lastError: null, attemptCount: { increment: 1 } } });
}

export async function markEmailNotSent(prisma: PrismaClient, id: string, error: string, retryAt: Date): Promise<void> {
  await prisma.webhookEmail.update({ where: { id }, data: { lastError: error, nextAttemptAt: retryAt, attemptCount: { increment: 1 } } });
}

/** Notices are kept as long as the delivery log they point to, then deleted, sent or not. */
export async function deleteExpiredEmails(prisma: PrismaClient, now: Date): Promise<number> {
  return prisma.webhookEmail
    .deleteMany({ where: { createdAt: { lt: new Date(now.getTime() - WEBHOOK_LIMITS.deliveryLogRetentionMs) } } })
    .then((r) => r.count);
}
