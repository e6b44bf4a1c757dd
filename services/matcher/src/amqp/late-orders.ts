import type { OrderRegistered } from '@pmatch/contracts';
import type { Delivery } from '@pmatch/platform';
import type { MatcherDeps } from '../use-cases/deps';
import { examineLateOrder } from '../use-cases/late-orders';

export function lateOrderHandler(deps: MatcherDeps & { onRecorded: () => void }) {
  return async (delivery: Delivery<OrderRegistered>): Promise<void> => {
    if (await examineLateOrder(deps, delivery.body, delivery.messageId)) deps.onRecorded();
  };
}
