import { QUEUES, type EventsRecorded } from '@pmatch/contracts';
import { reportOutOfScope, type BatchWriter, type Delivery, type Logger } from '@pmatch/platform';
import { OUT_OF_SCOPE, receivedEvents, type ReceivedEvent } from '../data/received-events';
import type { DispatcherMetrics } from '../use-cases/metrics';

/**
 * event.recorded: records each event of the message (`received`, batched with others') as pending
 * deliveries, then wakes the scheduler. The message is acknowledged once all its events are
 * recorded; if one fails, it comes back, and the events already recorded answer 0. An event whose
 * row is not of the organisation, mode and type the message says is not recorded, and reported:
 * the message must not send one seller's event to another's endpoints.
 */
export function eventHandler(deps: {
  received: BatchWriter<ReceivedEvent, number | typeof OUT_OF_SCOPE>;
  metrics: DispatcherMetrics;
  onDue: () => void;
  logger: Logger;
}) {
  const report = { logger: deps.logger, count: deps.metrics.outOfScope };
  return async (delivery: Delivery<EventsRecorded>): Promise<void> => {
    const events = receivedEvents(delivery.body);
    const outcomes = await deps.received.submitAll(events);
    let deliveries = 0;
    events.forEach((event, i) => {
      const outcome = outcomes[i]!;
      if (outcome === OUT_OF_SCOPE) {
        reportOutOfScope(
          report,
          QUEUES.dispatcherEvents,
          delivery.messageId,
          `event ${event.eventId} is not a ${event.type} event of ${event.organisationId} (${event.mode})`,
        );
        return;
      }
      deps.metrics.eventsReceived.inc({ type: event.type });
      deliveries += outcome;
    });
    deps.logger.info({ messageId: delivery.messageId, eventIds: events.map((e) => e.eventId), deliveries }, 'events received');
    if (deliveries > 0) deps.onDue();
  };
}
