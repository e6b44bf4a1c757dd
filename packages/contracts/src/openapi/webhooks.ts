import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { EVENT_TYPES, Event, eventSchemaName, type EventType } from '../events';
import { WEBHOOK_LIMITS } from '../webhooks';
import { EXAMPLE_IDS, exampleEvents } from './examples';

/** When each event type is recorded and delivered. */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'order.created': 'An order was registered, through the API or by a shop platform.',
  'order.updated': 'An open order was changed (`PATCH /v1/orders/{id}`).',
  'order.paid':
    'The order is paid: a deposit was matched to it automatically or by a person, it was marked paid, or a shop platform ' +
    'reported it paid. `data.object.payment` says how.',
  'order.canceled': 'The order was canceled.',
  'order.expired': "The order's `expires_at` passed while it was open; a later deposit for it is held, not confirmed.",
  'order.payment_reversed': 'A payment was reversed: the order is open again. `data.previous_payment` is the payment undone.',
  'transaction.deposited': 'A deposit arrived and was decided, once per deposit: its `status` is the decision (`confirmed`, `held` or `unmatched`).',
  'transaction.withdrawn': 'Money left the bank account.',
  'transaction.held':
    'A deposit could fit more than one order, or fits only in a way a person should confirm: it waits in `held` until ' +
    'someone matches or excludes it. `data.candidate_order_ids` are the orders it could be for.',
  'webhook.test': 'Sent only by `POST /v1/webhook-endpoints/{id}/test`, to check a receiver; never recorded.',
};

const SIGNATURE_HEADERS = [
  { name: 'webhook-id', description: 'The event id: the same for every attempt of one event, so use it to drop repeats.', example: EXAMPLE_IDS.event },
  { name: 'webhook-timestamp', description: 'When this attempt was signed, in Unix seconds. Refuse one far from your clock.', example: '1795496531' },
  {
    name: 'webhook-signature',
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the base64 part ' +
      'of the endpoint secret after `whsec_`; one per secret that still signs (a rotation leaves the old one signing 24 hours).',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
];

const camel = (type: EventType) => type.replace(/[._]([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The `webhooks` section: what an endpoint receives for each event type, and how to answer. */
export function registerWebhooks(registry: OpenAPIRegistry): void {
  const byType = new Map(Event.options.map((schema) => [schema.shape.type.value as EventType, schema]));
  const timeoutSeconds = WEBHOOK_LIMITS.responseTimeoutMs / 1000;
  for (const type of EVENT_TYPES) {
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `${camel(type)}Webhook`,
      tags: ['Webhooks'],
      // Deliveries carry no API key: the signature headers prove where they come from.
      security: [],
      summary: type,
      description: `${EVENT_DESCRIPTIONS[type]}\n\nThe body is the event (schema \`${eventSchemaName(type)}\`), as \`GET /v1/events\` lists it.`,
      parameters: SIGNATURE_HEADERS.map((h) => ({ in: 'header' as const, required: true, schema: { type: 'string' as const }, ...h })),
      request: { body: { required: true, content: { 'application/json': { schema: byType.get(type)!, example: exampleEvents[type] } } } },
      responses: {
        '2XX': { description: `Received. Answer within ${timeoutSeconds} seconds; do slow work after answering.` },
        '4XX': {
          description:
            'Any other answer, or none in time, is a failed attempt: the event is sent again after 1 minute, 5 minutes, 30 minutes, ' +
            '2, 6, 12 and 24 hours. After 72 hours of failures the endpoint is switched off.',
        },
      },
    });
  }
}
