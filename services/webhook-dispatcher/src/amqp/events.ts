import type { EventRecorded } from '@pmatch/contracts';
import type { Database } from '@pmatch/db';
import type { Clock, Delivery } from '@pmatch/platform';
import { recordReceivedEvent } from '../data/deliveries';
import type { DispatcherMetrics } from '../metrics';

/** event.recorded: one pending delivery per subscribed endpoint, then the scheduler sends them at once. */
export function eventHandler(deps: { database: Database; clock: Clock; metrics: DispatcherMetrics; onDue: () => void }) {
  return async (delivery: Delivery<EventRecorded>): Promise<void> => {
    const created = await recordReceivedEvent(deps.database.sql, delivery.body, delivery.messageId, deps.clock.now());
    deps.metrics.eventsReceived.inc({ type: delivery.body.type });
    if (created > 0) deps.onDue();
  };
}
