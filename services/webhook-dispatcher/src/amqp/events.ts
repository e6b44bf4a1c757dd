import type { EventsRecorded } from '@pmatch/contracts';
import type { BatchWriter, Delivery, Logger } from '@pmatch/platform';
import { receivedEvents, type ReceivedEvent } from '../data/received-events';
import type { DispatcherMetrics } from '../use-cases/metrics';

/**
 * event.recorded: records each event of the message (`received`, batched with others') as pending
 * deliveries, then wakes the scheduler. The message is acknowledged once all its events are
 * recorded; if one fails, it comes back, and the events already recorded answer 0.
 */
export function eventHandler(deps: { received: BatchWriter<ReceivedEvent, number>; metrics: DispatcherMetrics; onDue: () => void; logger?: Logger }) {
  return async (delivery: Delivery<EventsRecorded>): Promise<void> => {
    const events = receivedEvents(delivery.body);
    const created = await deps.received.submitAll(events);
    for (const event of events) deps.metrics.eventsReceived.inc({ type: event.type });
    const deliveries = created.reduce((sum, count) => sum + count, 0);
    deps.logger?.info({ messageId: delivery.messageId, eventIds: events.map((e) => e.eventId), deliveries }, 'events received');
    if (created.some((count) => count > 0)) deps.onDue();
  };
}
