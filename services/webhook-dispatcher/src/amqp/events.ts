import type { EventsRecorded } from '@pmatch/contracts';
import type { BatchWriter, Delivery } from '@pmatch/platform';
import { receivedEvents, type ReceivedEvent } from '../data/deliveries';
import type { DispatcherMetrics } from '../use-cases/metrics';

/**
 * event.recorded: one pending delivery per event and subscribed endpoint, then a nudge to the
 * scheduler. Events that arrive while a write runs go together in the next one; a message is
 * acknowledged once all its events are recorded, and one that fails comes back (the events
 * already recorded then create nothing).
 */
export function eventHandler(deps: { received: BatchWriter<ReceivedEvent, number>; metrics: DispatcherMetrics; onDue: () => void }) {
  return async (delivery: Delivery<EventsRecorded>): Promise<void> => {
    const events = receivedEvents(delivery.body);
    const created = await deps.received.submitAll(events);
    for (const event of events) deps.metrics.eventsReceived.inc({ type: event.type });
    if (created.some((count) => count > 0)) deps.onDue();
  };
}
