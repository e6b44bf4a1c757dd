import type { PrismaClient } from '@pmatch/db';
import type { Clock, Logger } from '@pmatch/platform';
import { claimDueEmail, markEmailNotSent, markEmailSent } from '../data/emails';
import type { DispatcherMetrics } from './metrics';
import { MAIL_SEND_DEADLINE_MS, type Mailer } from '../outbound/mailer';

/** E-mails sent per pass at most; the loop comes back at once while there are more. */
const BATCH = 20;
/**
 * How long a claimed e-mail is reserved for this process: one send's deadline and a margin for
 * recording it. Each e-mail is claimed right before it is sent, so no e-mail waits under a lease
 * behind others (another dispatcher would then send it again, and the owner get two).
 */
export const SEND_LEASE_MS = MAIL_SEND_DEADLINE_MS + 60_000;
const MAX_RETRY_WAIT_MS = 60 * 60_000;

export interface EmailDeps {
  prisma: PrismaClient;
  clock: Clock;
  logger: Logger;
  metrics: DispatcherMetrics;
  /** Over SMTP_URL; without it (development only), to files under MAIL_DIR. */
  mailer: Mailer;
}

/** Sends the owner e-mails that are due, one claim each; a failed send is retried later, backing off to hourly. */
export async function sendDueEmails(deps: EmailDeps): Promise<number> {
  let sent = 0;
  for (; sent < BATCH; sent += 1) {
    const now = deps.clock.now();
    const email = await claimDueEmail(deps.prisma, now, SEND_LEASE_MS);
    if (email === null) break;
    const retryAt = new Date(now.getTime() + Math.min(MAX_RETRY_WAIT_MS, 60_000 * 2 ** email.attempt_count));
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
  return sent;
}
