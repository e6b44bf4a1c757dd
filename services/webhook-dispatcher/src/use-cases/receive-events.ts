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
 * The one way events come in (an `event.recorded` message or the event sweep): each becomes one
 * pending delivery per subscribed endpoint, once per event id, then the scheduler is woken. An event
 * whose row is not of the organisation, mode and type said is reported, not recorded. Resolves
 * with the deliveries created; rejects if any event could not be recorded.
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
