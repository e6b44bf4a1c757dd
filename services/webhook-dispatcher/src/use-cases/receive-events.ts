import { QUEUES } from '@pmatch/contracts';
import { reportOutOfScope, type BatchWriter, type Logger } from '@pmatch/platform';
import { OUT_OF_SCOPE, type ReceivedEvent } from '../data/received-events';
import type { DispatcherMetrics } from './metrics';

export interface ReceiveEventsDeps {
  /** Writes received events (`recordReceivedEvents`), batched with others'; per event, the deliveries created or OUT_OF_SCOPE. */
  received: BatchWriter<ReceivedEvent, number | typeof OUT_OF_SCOPE>;
  metrics: DispatcherMetrics;
  /** Wakes the delivery scheduler. */
  onDue: () => void;
  logger: Logger;
}

/**
 * Takes events in: each becomes one pending delivery per subscribed endpoint, once per event
 * however often it comes (the inbox row per event id is written in the same statement), then the
 * scheduler is woken. The one way in for events, whether an `event.recorded` message brought them
 * (`context.messageId`) or the event sweep found them. An event whose row is not of the
 * organisation, mode and type said is not recorded, and reported: a message must not send one
 * seller's event to another's endpoints. Resolves with the deliveries created; rejects if any event
 * could not be recorded (those that were answer 0 the next time).
 */
export async function receiveEvents(deps: ReceiveEventsDeps, events: ReceivedEvent[], context: { messageId?: string; sweep?: true }): Promise<number> {
  const outcomes = await deps.received.submitAll(events);
  const report = { logger: deps.logger, count: deps.metrics.outOfScope };
  let deliveries = 0;
  events.forEach((event, i) => {
    const outcome = outcomes[i]!;
    if (outcome === OUT_OF_SCOPE) {
      const detail = `event ${event.eventId} is not a ${event.type} event of ${event.organisationId} (${event.mode})`;
      reportOutOfScope(report, QUEUES.dispatcherEvents, context.messageId ?? 'event sweep', detail);
      return;
    }
    deps.metrics.eventsReceived.inc({ type: event.type });
    deliveries += outcome;
  });
  deps.logger.info({ ...context, eventIds: events.map((e) => e.eventId), deliveries }, 'events received');
  if (deliveries > 0) deps.onDue();
  return deliveries;
}
