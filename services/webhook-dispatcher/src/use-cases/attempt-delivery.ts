import { eventView, type PrismaClient } from '@pmatch/db';
import type { Clock, Logger, SecretBox } from '@pmatch/platform';
import { deliveryFailedEmail, endpointDisabledEmail } from '../domain/emails';
import { failingTooLong, failureEmailAllowed, isAcknowledged, nextAttemptAt } from '../domain/retries';
import { deliveryHeaders, signingSecrets } from '../domain/signature';
import {
  noteFailureEmailQueued,
  recordAcknowledgedAttempt,
  recordFailedAttempt,
  switchOffFailingEndpoint,
  type ClaimedDelivery,
  type FinishedAttempt,
} from '../data/deliveries';
import { queueEmail } from '../data/emails';
import type { DispatcherMetrics } from '../metrics';
import type { WebhookClient } from '../outbound/webhook-client';

export interface AttemptDeps {
  prisma: PrismaClient;
  clock: Clock;
  secretBox: SecretBox;
  client: WebhookClient;
  logger: Logger;
  metrics: DispatcherMetrics;
  /** 0…1, how much of the allowed retry jitter to use; tests may fix it. */
  random: () => number;
}

/**
 * Makes one attempt of a claimed delivery and records it: the log line, the delivery's next due
 * time or final status, the endpoint's run of failures, and the owner's e-mails, atomically (one
 * statement for a success, one DB transaction for a failure, which may switch the endpoint off and
 * queue e-mails). The body is the event object serialised once; those exact bytes are signed and sent.
 */
export async function attemptDelivery(deps: AttemptDeps, delivery: ClaimedDelivery): Promise<void> {
  const { endpoint, event } = delivery;
  const attemptedAt = deps.clock.now();
  const body = JSON.stringify(eventView(event));
  const secrets = signingSecrets(
    {
      secret: deps.secretBox.open(endpoint.secretEncrypted),
      previousSecret: endpoint.previousSecretEncrypted === null ? null : deps.secretBox.open(endpoint.previousSecretEncrypted),
      previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
    },
    attemptedAt,
  );
  const outcome = await deps.client.post(endpoint.url, deliveryHeaders(secrets, event.id, attemptedAt, body), body);

  const attempt = delivery.attemptCount + 1;
  const acknowledged = outcome.statusCode !== null && isAcknowledged(outcome.statusCode);
  const retryAt = acknowledged ? null : nextAttemptAt(attempt, delivery.maxAttempts, attemptedAt, deps.random());
  const status = acknowledged ? 'succeeded' : retryAt === null ? 'failed' : 'pending';
  const label = acknowledged ? 'succeeded' : 'failed';
  deps.metrics.attempts.inc({ outcome: label });
  deps.metrics.attemptDuration.observe({ outcome: label }, outcome.durationMs / 1000);

  const finished: FinishedAttempt = {
    deliveryId: delivery.id,
    endpointId: endpoint.id,
    attempt,
    attemptedAt,
    statusCode: outcome.statusCode,
    durationMs: outcome.durationMs,
    error: outcome.error,
    status,
    nextAttemptAt: retryAt,
  };
  const recorded = acknowledged
    ? await recordAcknowledgedAttempt(deps.prisma, finished)
    : await deps.prisma.$transaction(async (tx) => {
        const failing = await recordFailedAttempt(tx, finished);
        if (failing === null) return false;
        if (failing.enabled && failingTooLong(failing.failingSince, attemptedAt)) {
          await switchOffFailingEndpoint(tx, endpoint.id, attemptedAt);
          await queueEmail(tx, { ...endpointDisabledEmail(endpoint, failing.failingSince), endpointId: endpoint.id, recipient: failing.ownerEmail }, attemptedAt);
          deps.metrics.endpointsSwitchedOff.inc();
          deps.logger.warn({ endpointId: endpoint.id, failingSince: failing.failingSince }, 'webhook endpoint switched off after 72 h of failures');
        }
        if (status === 'failed' && failureEmailAllowed(failing.lastFailureEmailAt, attemptedAt)) {
          const email = deliveryFailedEmail(endpoint, { eventId: event.id, eventType: event.type, attempts: attempt, lastError: outcome.error ?? 'unknown' });
          await queueEmail(tx, { ...email, endpointId: endpoint.id, recipient: failing.ownerEmail }, attemptedAt);
          await noteFailureEmailQueued(tx, endpoint.id, attemptedAt);
        }
        return true;
      });
  if (!recorded) {
    deps.logger.warn({ deliveryId: delivery.id, attempt }, 'attempt outlived its lease and another dispatcher made it; not recorded');
    return;
  }
  if (status !== 'pending') deps.metrics.deliveriesFinished.inc({ status });
}
