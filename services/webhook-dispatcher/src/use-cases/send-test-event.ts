import type { Event } from '@pmatch/contracts';
import { isAcknowledged } from '../domain/retries';
import { deliveryHeaders, signingSecrets } from '../domain/signature';
import type { AttemptDeps } from './attempt-delivery';

/** What an attempt needs, less the retry jitter: a test event is never retried. */
export type TestEventDeps = Omit<AttemptDeps, 'random'>;

/**
 * Sends webhook.test once, signed like any delivery. The spec keeps test events out of the
 * delivery log, so the outcome goes to the service log and metrics only, and there is no retry:
 * the merchant pressed the button and watches their receiver.
 */
export async function sendTestEvent(deps: TestEventDeps, endpointId: string, event: Event): Promise<void> {
  const endpoint = await deps.prisma.webhookEndpoint.findFirst({ where: { id: endpointId, deletedAt: null } });
  if (endpoint === null) return;
  const at = deps.clock.now();
  const secrets = signingSecrets(
    {
      secret: deps.secretBox.open(endpoint.secretEncrypted),
      previousSecret: endpoint.previousSecretEncrypted === null ? null : deps.secretBox.open(endpoint.previousSecretEncrypted),
      previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
    },
    at,
  );
  const body = JSON.stringify(event);
  const outcome = await deps.client.post(endpoint.url, deliveryHeaders(secrets, event.id, at, body), body);
  const acknowledged = outcome.statusCode !== null && isAcknowledged(outcome.statusCode);
  deps.metrics.testEventsSent.inc({ outcome: acknowledged ? 'succeeded' : 'failed' });
  deps.logger.info({ endpointId, eventId: event.id, statusCode: outcome.statusCode, error: outcome.error }, 'test event sent');
}
