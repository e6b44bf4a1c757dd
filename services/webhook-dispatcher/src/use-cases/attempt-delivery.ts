import { performance } from 'node:perf_hooks';
import { eventObject, type Database } from '@pmatch/db';
import type { BatchWriter, Clock, Logger, SecretBox } from '@pmatch/platform';
import { deliveryFailedEmail, endpointDisabledEmail } from '../domain/emails';
import { failingTooLong, failureEmailAllowed, isAcknowledged, nextAttemptAt } from '../domain/retries';
import { deliveryHeaders, signingSecrets } from '../domain/signature';
import { recordFailedAttempt, type FinishedAttempt } from '../data/attempts';
import type { ClaimedDelivery, ClaimedEndpoint } from '../data/claims';
import { noteFailureEmailQueued, switchOffFailingEndpoint } from '../data/endpoints';
import { queueEmail } from '../data/emails';
import type { DispatcherMetrics } from './metrics';
import type { HttpOutcome, WebhookClient } from '../outbound/webhook-client';

export interface AttemptDeps {
  /** Plain SQL: recording an attempt is the hot path of every delivery. */
  database: Database;
  /**
   * Records acknowledged attempts (`recordAcknowledgedAttempts`), those finishing together in one
   * statement: at full load, one commit for many deliveries instead of one each.
   */
  acknowledged: BatchWriter<FinishedAttempt, boolean>;
  clock: Clock;
  secretBox: SecretBox;
  client: WebhookClient;
  logger: Logger;
  metrics: DispatcherMetrics;
  /** 0…1, how much of the allowed retry jitter to use; tests may fix it. */
  random: () => number;
}

/**
 * Makes one attempt of a claimed delivery and records it atomically: the log line, the next due
 * time or final status, the endpoint's run of failures (which may switch it off) and the owner's
 * e-mails. An attempt that cannot even be sent (a fault of ours) is recorded as a failure like
 * any other; only a failure to record is left to the lease.
 */
export async function attemptDelivery(deps: AttemptDeps, delivery: ClaimedDelivery): Promise<void> {
  const { endpoint, event } = delivery;
  const attemptedAt = deps.clock.now();
  const outcome = await sendOrExplain(deps, { endpointId: endpoint.id, eventId: event.id }, async () => {
    const body = JSON.stringify(eventObject(event));
    return deps.client.post(
      endpoint.organisationId,
      endpoint.url,
      deliveryHeaders(openSigningSecrets(deps.secretBox, endpoint, attemptedAt), event.id, attemptedAt, body),
      body,
    );
  });

  const attempt = delivery.attemptCount + 1;
  const acknowledged = outcome.statusCode !== null && isAcknowledged(outcome.statusCode);
  const label = acknowledged ? 'succeeded' : 'failed';
  deps.metrics.attempts.inc({ outcome: label });
  deps.metrics.attemptDuration.observe({ outcome: label }, outcome.durationMs / 1000);

  const finished: FinishedAttempt = {
    deliveryId: delivery.id,
    endpointId: endpoint.id,
    attempt,
    leasedUntil: delivery.leasedUntil,
    attemptedAt,
    statusCode: outcome.statusCode,
    durationMs: outcome.durationMs,
    error: outcome.error,
    retryAt: acknowledged ? null : nextAttemptAt(attempt, delivery.maxAttempts, attemptedAt, deps.random()),
  };
  const status = acknowledged
    ? (await deps.acknowledged.submit(finished)) && 'succeeded'
    : await deps.database.transaction(async (tx) => {
        const recorded = await recordFailedAttempt(tx, finished);
        if (recorded === null) return false;
        const failing = recorded.endpoint;
        if (failing.enabled && failingTooLong(failing.failingSince, attemptedAt)) {
          await switchOffFailingEndpoint(tx, endpoint.id, attemptedAt);
          await queueEmail(
            tx,
            { ...endpointDisabledEmail(endpoint, failing.failingSince), endpointId: endpoint.id, recipient: failing.ownerEmail },
            attemptedAt,
          );
          deps.metrics.endpointsSwitchedOff.inc();
          deps.logger.warn({ endpointId: endpoint.id, failingSince: failing.failingSince }, 'webhook endpoint switched off after 72 h of failures');
        }
        if (recorded.status === 'failed' && failureEmailAllowed(failing.lastFailureEmailAt, attemptedAt)) {
          const email = deliveryFailedEmail(endpoint, { eventId: event.id, eventType: event.type, attempts: attempt, lastError: outcome.error ?? 'unknown' });
          await queueEmail(tx, { ...email, endpointId: endpoint.id, recipient: failing.ownerEmail }, attemptedAt);
          await noteFailureEmailQueued(tx, endpoint.id, attemptedAt);
        }
        return recorded.status;
      });
  if (status === false) {
    deps.logger.warn({ deliveryId: delivery.id, attempt }, 'attempt outlived its lease and another dispatcher made it; not recorded');
    return;
  }
  if (status !== 'pending') deps.metrics.deliveriesFinished.inc({ status });
}

/**
 * The secrets to sign with at `at`, opened: the current one and each replaced one still inside
 * its overlap. Expired ones are not even opened.
 */
export function openSigningSecrets(secretBox: SecretBox, endpoint: Pick<ClaimedEndpoint, 'id' | 'secretEncrypted' | 'replacedSecrets'>, at: Date): string[] {
  const sealed = signingSecrets(
    { secret: endpoint.secretEncrypted, replaced: endpoint.replacedSecrets.map((r) => ({ secret: r.secretEncrypted, expiresAt: r.expiresAt })) },
    at,
  );
  return sealed.map((s) => {
    try {
      return secretBox.open(s, { kind: 'webhook_endpoint', id: endpoint.id });
    } catch (error) {
      throw new UnsendableError("the endpoint's signing secret could not be decrypted", error);
    }
  });
}

/** A fault of ours that keeps an attempt from being sent; its message is fit for the merchant's log. */
class UnsendableError extends Error {
  constructor(reason: string, cause: unknown) {
    super(reason, { cause });
  }
}

/**
 * Runs `send`, or turns a fault that kept it from sending into a failed outcome. The merchant's
 * log gets a plain reason and never the fault's own message (which might carry internals); our log
 * gets all of it.
 */
export async function sendOrExplain(
  deps: Pick<AttemptDeps, 'logger'>,
  context: Record<string, string>,
  send: () => Promise<HttpOutcome>,
): Promise<HttpOutcome> {
  const started = performance.now();
  try {
    return await send();
  } catch (error) {
    deps.logger.error({ err: error, ...context }, 'webhook not sent: a fault of the dispatcher; recorded as a failed attempt');
    const reason = error instanceof UnsendableError ? error.message : 'an internal error of the sender';
    return { statusCode: null, error: `not sent: ${reason} (a fault on our side, not of the endpoint)`, durationMs: Math.round(performance.now() - started) };
  }
}
