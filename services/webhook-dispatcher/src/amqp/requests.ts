import type { WebhookRequest } from '@pmatch/contracts';
import type { Delivery } from '@pmatch/platform';
import { requestResend } from '../data/deliveries';
import { sendTestEvent, type TestEventDeps } from '../use-cases/send-test-event';

/** Requests from orders-api: send a test event now, or resend one event from the delivery log. */
export function requestHandler(deps: TestEventDeps & { onDue: () => void }) {
  return async (delivery: Delivery<WebhookRequest>): Promise<void> => {
    const request = delivery.body;
    switch (request.type) {
      case 'webhook.send_test':
        await sendTestEvent(deps, request.endpoint_id, request.event);
        return;
      case 'webhook.resend':
        if (await requestResend(deps.prisma, { endpointId: request.endpoint_id, eventId: request.event_id }, delivery.messageId, deps.clock.now())) {
          deps.onDue();
        }
        return;
    }
  };
}
