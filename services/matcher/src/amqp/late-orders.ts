import type { OrdersRegistered } from '@pmatch/contracts';
import type { Delivery } from '@pmatch/platform';
import type { MatcherDeps } from '../use-cases/deps';
import { lateOrderExaminer } from '../use-cases/late-orders';

export function lateOrderHandler(deps: MatcherDeps & { onRecorded: () => void }) {
  const examine = lateOrderExaminer(deps);
  return async (delivery: Delivery<OrdersRegistered>): Promise<void> => {
    if (await examine(delivery.body.orders)) deps.onRecorded();
  };
}
