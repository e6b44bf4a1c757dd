import type { EventsRecorded } from '@pmatch/contracts';
import type { BatchWriter, Delivery } from '@pmatch/platform';
import { receivedEvents, type ReceivedEvent } from '../data/received-events';
import type { DispatcherMetrics } from '../metrics';

/**
 * event.recorded: for each event of the message, one pending delivery per subscribed endpoint,
 * then the scheduler sends them at once. Events that arrive while the write before them runs are
 * recorded together (`received`), whichever messages they came in, and a message's events go in
 * the same write (a statement's new orders announce theirs in one message); a message is acknowledged once
 * all its events are recorded. If one of them fails, the message goes back and the events already
 * recorded answer 0 when it returns.
 */
export function eventHandler(deps: { received: BatchWriter<ReceivedEvent, number>; metrics: DispatcherMetrics; onDue: () => void }) {
  return async (delivery: Delivery<EventsRecorded>): Promise<void> => {
    const events = receivedEvents(delivery.body);
    const created = await deps.received.submitAll(events);
    for (const event of events) deps.metrics.eventsReceived.inc({ type: event.type });
    if (created.some((count) => count > 0)) deps.onDue();
  };
}
