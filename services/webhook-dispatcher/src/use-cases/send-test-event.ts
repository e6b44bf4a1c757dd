import { QUEUES, TEST_EVENT_ID_PREFIX, type Event } from '@pmatch/contracts';
import { reportOutOfScope } from '@pmatch/platform';
import type { PrismaClient } from '@pmatch/db';
import { findEndpointForTestEvent } from '../data/endpoints';
import { recordTestSend } from '../data/test-sends';
import { isAcknowledged } from '../domain/retries';
import { deliveryHeaders } from '../domain/signature';
import { openSigningSecrets, sendOrExplain, type AttemptDeps } from './attempt-delivery';

/**
 * What an attempt needs, less the retry jitter (a test event is never retried), the recording of
 * a delivery's outcome (a test event is no delivery) and the plain SQL (its read of the endpoint
 * and its one write are no hot path): Prisma instead.
 */
export type TestEventDeps = Omit<AttemptDeps, 'random' | 'database' | 'acknowledged'> & { prisma: PrismaClient };

/**
 * Sends webhook.test once, signed like any delivery, and records how it went as a test send, which
 * the console shows in the endpoint's delivery log (never among the API's delivery attempts: a test
 * event is no recorded event). There is no retry: the merchant pressed the button and watches. It runs in a slot of the delivery
 * scheduler, bounded per endpoint and in all like a delivery attempt. Only a webhook.test event of
 * the endpoint's mode is sent (`isTestEventFor`): the endpoint's secret signs nothing else this way.
 */
export async function sendTestEvent(deps: TestEventDeps, endpointId: string, event: Event, messageId = ''): Promise<void> {
  const endpoint = await findEndpointForTestEvent(deps.prisma, endpointId);
  if (endpoint === null) return;
  if (!isTestEventFor(event, endpoint.mode)) {
    reportOutOfScope(
      { logger: deps.logger, count: deps.metrics.outOfScope },
      QUEUES.dispatcherRequests,
      messageId,
      `event ${event.id} (${event.type}) is no test event of endpoint ${endpointId}'s mode`,
    );
    return;
  }
  const at = deps.clock.now();
  const outcome = await sendOrExplain(deps, { endpointId, eventId: event.id }, async () => {
    const body = JSON.stringify(event);
    return deps.client.post(endpoint.organisationId, endpoint.url, deliveryHeaders(openSigningSecrets(deps.secretBox, endpoint, at), event.id, at, body), body);
  });
  await recordTestSend(deps.prisma, {
    endpointId,
    eventId: event.id,
    statusCode: outcome.statusCode,
    durationMs: outcome.durationMs,
    error: outcome.error ?? null,
    sentAt: at,
  });
  const acknowledged = outcome.statusCode !== null && isAcknowledged(outcome.statusCode);
  deps.metrics.testEventsSent.inc({ outcome: acknowledged ? 'succeeded' : 'failed' });
  deps.logger.info({ endpointId, eventId: event.id, statusCode: outcome.statusCode, error: outcome.error }, 'test event sent');
}

/** Whether the event is what orders-api sends as a test: webhook.test, a test event id, the endpoint's mode. */
export function isTestEventFor(event: Event, mode: 'test' | 'live'): boolean {
  return event.type === 'webhook.test' && event.id.startsWith(TEST_EVENT_ID_PREFIX) && event.livemode === (mode === 'live');
}
