import { QUEUES, type WebhookRequest } from '@pmatch/contracts';
import { OutOfScopeError, reportOutOfScope, type Delivery } from '@pmatch/platform';
import { requestResend } from '../data/resends';
import { sendTestEvent, type TestEventDeps } from '../use-cases/send-test-event';

/**
 * Requests from orders-api: send a test event, or resend one event from the delivery log. A test
 * event is handed to the scheduler, which sends it in a slot of its endpoint, so a hanging URL
 * holds neither this queue nor more than its endpoint's share of the slots. A request naming an
 * event of another organisation or mode than its endpoint's, or a test event that is none, changes
 * nothing and is reported (acknowledged, not retried).
 */
export function requestHandler(deps: TestEventDeps & { onDue: () => void; enqueueTestEvent: (endpointId: string, send: () => Promise<void>) => boolean }) {
  const report = { logger: deps.logger, count: deps.metrics.outOfScope };
  return async (delivery: Delivery<WebhookRequest>): Promise<void> => {
    const request = delivery.body;
    switch (request.type) {
      case 'webhook.send_test':
        if (!deps.enqueueTestEvent(request.endpoint_id, () => sendTestEvent(deps, request.endpoint_id, request.event, delivery.messageId))) {
          deps.metrics.testEventsSent.inc({ outcome: 'dropped' });
          deps.logger.info({ endpointId: request.endpoint_id, eventId: request.event.id }, 'test event dropped: its endpoint has several waiting already');
        }
        return;
      case 'webhook.resend':
        try {
          if (await requestResend(deps.prisma, { endpointId: request.endpoint_id, eventId: request.event_id }, delivery.messageId, deps.clock.now())) {
            deps.onDue();
          }
        } catch (error) {
          if (!(error instanceof OutOfScopeError)) throw error;
          reportOutOfScope(report, QUEUES.dispatcherRequests, delivery.messageId, error.message);
        }
        return;
    }
  };
}
