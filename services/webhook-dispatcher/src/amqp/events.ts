import type { EventRecorded } from '@pmatch/contracts';
import type { BatchWriter, Delivery } from '@pmatch/platform';
import type { ReceivedEvent } from '../data/deliveries';
import type { DispatcherMetrics } from '../metrics';

/**
 * event.recorded: one pending delivery per subscribed endpoint, then the scheduler sends them at
 * once. Messages that arrive while the write before them runs are recorded together (`received`);
 * each is acknowledged once its batch has committed.
 */
export function eventHandler(deps: { received: BatchWriter<ReceivedEvent, number>; metrics: DispatcherMetrics; onDue: () => void }) {
  return async (delivery: Delivery<EventRecorded>): Promise<void> => {
    const created = await deps.received.submit({ messageId: delivery.messageId, message: delivery.body });
    deps.metrics.eventsReceived.inc({ type: delivery.body.type });
    if (created > 0) deps.onDue();
  };
}
