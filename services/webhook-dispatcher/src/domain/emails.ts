import type { Mode } from '@pmatch/contracts';

export type EmailKind = 'delivery_failed' | 'endpoint_disabled';

export interface Email {
  kind: EmailKind;
  subject: string;
  body: string;
}

export interface EndpointFacts {
  id: string;
  url: string;
  mode: Mode;
}

const apiPath = (endpointId: string) => `/v1/webhook-endpoints/${endpointId}`;

/** Sent when a delivery used its last attempt; at most one per endpoint per 24 hours. */
export function deliveryFailedEmail(endpoint: EndpointFacts, failed: { eventId: string; eventType: string; attempts: number; lastError: string }): Email {
  return {
    kind: 'delivery_failed',
    subject: `Webhook delivery failed: ${endpoint.url}`,
    body: [
      `A webhook could not be delivered to your ${endpoint.mode}-mode endpoint ${endpoint.url} (${endpoint.id}).`,
      '',
      `Event: ${failed.eventId} (${failed.eventType})`,
      `Attempts: ${failed.attempts}; the last one failed with: ${failed.lastError}`,
      '',
      'This event will not be sent again by itself. Once the endpoint answers 2xx again, resend it from the delivery log:',
      `  POST ${apiPath(endpoint.id)}/deliveries/resend  {"event_id": "${failed.eventId}"}`,
      `Every attempt is listed at GET ${apiPath(endpoint.id)}/deliveries.`,
      '',
      'You get at most one such e-mail per endpoint every 24 hours, however many deliveries fail.',
    ].join('\n'),
  };
}

/** Sent once when an endpoint is switched off after 72 hours of nothing but failures. */
export function endpointDisabledEmail(endpoint: EndpointFacts, failingSince: Date): Email {
  return {
    kind: 'endpoint_disabled',
    subject: `Webhook endpoint switched off: ${endpoint.url}`,
    body: [
      `Every delivery to your ${endpoint.mode}-mode endpoint ${endpoint.url} (${endpoint.id}) has failed since ${failingSince.toISOString()},`,
      'so it has been switched off and no events are sent to it any more.',
      '',
      'To receive events again, repair the endpoint and switch it back on:',
      `  PATCH ${apiPath(endpoint.id)}  {"enabled": true}`,
      'Events missed meanwhile are not sent by themselves. Find them with GET /v1/events and resend each one:',
      `  POST ${apiPath(endpoint.id)}/deliveries/resend  {"event_id": "evt_…"}`,
    ].join('\n'),
  };
}
