import type { EventsRecorded } from '@pmatch/contracts';
import type { Delivery } from '@pmatch/platform';
import { receivedEvents } from '../data/received-events';
import { receiveEvents, type ReceiveEventsDeps } from '../use-cases/receive-events';

/**
 * event.recorded: takes the message's events in (`receiveEvents`). The message is acknowledged
 * once all its events are recorded; if one fails, it comes back, and the events already recorded
 * answer 0.
 */
export function eventHandler(deps: ReceiveEventsDeps) {
  return async (delivery: Delivery<EventsRecorded>): Promise<void> => {
    await receiveEvents(deps, receivedEvents(delivery.body), { messageId: delivery.messageId });
  };
}
