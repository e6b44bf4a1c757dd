import type { BatchWriter, Logger } from '@pmatch/platform';
import type { ReceivedEvent } from '../data/received-events';
import type { DispatcherMetrics } from './metrics';

export interface ReceiveEventsDeps {
  /** Writes received events (`recordReceivedEvents`), batched with others'; one count of deliveries created per event. */
  received: BatchWriter<ReceivedEvent, number>;
  metrics: DispatcherMetrics;
  /** Wakes the delivery scheduler. */
  onDue: () => void;
  logger?: Logger;
}

/**
 * Takes events in: each becomes one pending delivery per subscribed endpoint, once per event
 * however often it comes (the inbox row per event id is written in the same statement), then the
 * scheduler is woken. The one way in for events, whether an `event.recorded` message brought them
 * or the event sweep found them. Resolves with the deliveries created; rejects if any event could
 * not be recorded (those that were answer 0 the next time).
 */
export async function receiveEvents(deps: ReceiveEventsDeps, events: ReceivedEvent[], context: Record<string, unknown>): Promise<number> {
  const created = await deps.received.submitAll(events);
  for (const event of events) deps.metrics.eventsReceived.inc({ type: event.type });
  const deliveries = created.reduce((sum, count) => sum + count, 0);
  deps.logger?.info({ ...context, eventIds: events.map((e) => e.eventId), deliveries }, 'events received');
  if (deliveries > 0) deps.onDue();
  return deliveries;
}
