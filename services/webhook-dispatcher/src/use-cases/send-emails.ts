import type { PrismaClient } from '@pmatch/db';
import type { Clock, Logger } from '@pmatch/platform';
import { claimDueEmails, deleteExpiredEmails, markEmailNotSent, markEmailSent } from '../data/emails';
import type { DispatcherMetrics } from '../metrics';
import type { Mailer } from '../outbound/mailer';

const BATCH = 20;
/** Longer than the mailer's own deadlines, so a send in progress is never claimed twice. */
const SEND_LEASE_MS = 2 * 60_000;
const MAX_RETRY_WAIT_MS = 60 * 60_000;

export interface EmailDeps {
  prisma: PrismaClient;
  clock: Clock;
  logger: Logger;
  metrics: DispatcherMetrics;
  /** Undefined when SMTP_URL is not set: notices then wait in the table until it is. */
  mailer: Mailer | undefined;
}

/** Sends the owner e-mails that are due; a failed send is retried later, backing off to hourly. */
export async function sendDueEmails(deps: EmailDeps): Promise<number> {
  const now = deps.clock.now();
  await deleteExpiredEmails(deps.prisma, now);
  const due = await claimDueEmails(deps.prisma, now, BATCH, SEND_LEASE_MS);
  for (const email of due) {
    const retryAt = new Date(now.getTime() + Math.min(MAX_RETRY_WAIT_MS, 60_000 * 2 ** email.attempt_count));
    if (deps.mailer === undefined) {
      deps.logger.warn({ emailId: email.id }, 'SMTP_URL is not set; an owner e-mail waits unsent');
      await markEmailNotSent(deps.prisma, email.id, 'SMTP_URL is not set', retryAt);
      continue;
    }
    try {
      await deps.mailer.send({ to: email.recipient, subject: email.subject, text: email.body });
      await markEmailSent(deps.prisma, email.id, deps.clock.now());
      deps.metrics.emails.inc({ kind: email.kind, outcome: 'sent' });
    } catch (error) {
      deps.logger.warn({ err: error, emailId: email.id }, 'owner e-mail not sent; will retry');
      await markEmailNotSent(deps.prisma, email.id, error instanceof Error ? error.message : String(error), retryAt);
      deps.metrics.emails.inc({ kind: email.kind, outcome: 'failed' });
    }
  }
  return due.length;
}
