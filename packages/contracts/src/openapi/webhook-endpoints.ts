import { ListQuery, listOf } from '../api';
import { Event } from '../events';
import {
  CreatedWebhookEndpoint,
  CreateWebhookEndpointRequest,
  DeletedWebhookEndpoint,
  DeliveryLogQuery,
  ResendAccepted,
  ResendRequest,
  UpdateWebhookEndpointRequest,
  WEBHOOK_LIMITS,
  WebhookDeliveryAttempt,
  WebhookEndpoint,
  WebhookEndpointId,
  WebhookEndpointSecret,
} from '../webhooks';
import { EXAMPLE_IDS, exampleDeliveryAttempt, exampleEvents, exampleSigningSecret, exampleWebhookEndpoint } from './examples';
import { document, type Operation } from './operations';

const tag = 'Webhook endpoints';
const endpointPath = '/v1/webhook-endpoints/{id}';
const pathId = WebhookEndpointId.openapi({ description: 'The webhook endpoint (`we_…`).' });
const secretAnswer = { object: 'webhook_endpoint_secret', secret: exampleSigningSecret, previous_secret_expires_at: null };
/** An endpoint receives every bank account's events, so a key limited to one bank account may not manage it. */
const scoped = (errors: Operation['errors'] = []): Operation['errors'] => ['insufficient_scope', ...errors];

document({
  method: 'post',
  path: '/v1/webhook-endpoints',
  operationId: 'createWebhookEndpoint',
  tag,
  summary: 'Register a webhook endpoint',
  description:
    `Registers an https URL to receive the events of the key's mode (at most ${WEBHOOK_LIMITS.endpointsPerMode} per mode). ` +
    '`enabled_events` selects types; `["*"]`, the default, is every type, including types added later. ' +
    'The answer shows the signing `secret`: keep it to verify deliveries. The URL must lead to a public address.',
  request: { schema: CreateWebhookEndpointRequest, example: { url: exampleWebhookEndpoint.url, enabled_events: ['order.paid', 'transaction.held'] } },
  responses: {
    201: {
      description: 'The endpoint, with its signing secret.',
      schema: CreatedWebhookEndpoint,
      example: { ...exampleWebhookEndpoint, enabled_events: ['order.paid', 'transaction.held'], secret: exampleSigningSecret },
    },
  },
  errors: scoped(['endpoint_limit_reached', 'url_not_allowed']),
});

document({
  method: 'get',
  path: '/v1/webhook-endpoints',
  operationId: 'listWebhookEndpoints',
  tag,
  summary: 'List webhook endpoints',
  description: "The webhook endpoints of the key's mode, oldest first.",
  query: ListQuery,
  responses: {
    200: {
      description: 'A page of endpoints.',
      schema: listOf(WebhookEndpoint).openapi('WebhookEndpointList'),
      example: { object: 'list', data: [exampleWebhookEndpoint], has_more: false },
    },
  },
  errors: scoped(),
});

document({
  method: 'get',
  path: endpointPath,
  operationId: 'retrieveWebhookEndpoint',
  tag,
  summary: 'Retrieve a webhook endpoint',
  description: 'The endpoint, with `failing_since` while its deliveries fail and `disabled_reason` once switched off.',
  pathId,
  responses: { 200: { description: 'The endpoint.', schema: WebhookEndpoint, example: exampleWebhookEndpoint } },
  errors: scoped(),
});

document({
  method: 'patch',
  path: endpointPath,
  operationId: 'updateWebhookEndpoint',
  tag,
  summary: 'Change a webhook endpoint',
  description:
    'Changes the `url` or `enabled_events`, or switches the endpoint off and on (`enabled`). An endpoint whose deliveries ' +
    'failed for 72 hours is switched off (`disabled_reason: "failing"`); switch it on once it is repaired.',
  pathId,
  request: { schema: UpdateWebhookEndpointRequest, example: { enabled: false } },
  responses: {
    200: { description: 'The changed endpoint.', schema: WebhookEndpoint, example: { ...exampleWebhookEndpoint, enabled: false, disabled_reason: 'manual' } },
  },
  errors: scoped(['url_not_allowed']),
});

document({
  method: 'delete',
  path: endpointPath,
  operationId: 'deleteWebhookEndpoint',
  tag,
  summary: 'Delete a webhook endpoint',
  description: 'Deletes the endpoint: nothing more is delivered to it.',
  pathId,
  responses: {
    200: { description: 'Deleted.', schema: DeletedWebhookEndpoint, example: { id: EXAMPLE_IDS.webhookEndpoint, object: 'webhook_endpoint', deleted: true } },
  },
  errors: scoped(),
});

document({
  method: 'get',
  path: `${endpointPath}/secret`,
  operationId: 'retrieveWebhookEndpointSecret',
  tag,
  summary: 'Retrieve the signing secret',
  description:
    'The secret deliveries are signed with. A read-only key may not read it: it forges deliveries. A stored secret that ' +
    'does not open for this endpoint (it was altered or copied from another record) is never shown: the answer is ' +
    '`409 secret_unavailable`, and a rotation issues a new secret.',
  pathId,
  responses: { 200: { description: 'The signing secret.', schema: WebhookEndpointSecret, example: secretAnswer } },
  errors: scoped(['secret_unavailable']),
});

document({
  method: 'post',
  path: `${endpointPath}/rotate-secret`,
  operationId: 'rotateWebhookEndpointSecret',
  tag,
  summary: 'Rotate the signing secret',
  description:
    'Issues a new secret. Each replaced secret still signs deliveries for 24 hours (`previous_secret_expires_at`), so ' +
    'receivers can switch without losing one. While 4 replaced secrets still sign, a rotation is `429 rate_limited` with ' +
    '`Retry-After`.',
  pathId,
  responses: {
    200: {
      description: 'The new secret.',
      schema: WebhookEndpointSecret,
      example: { ...secretAnswer, previous_secret_expires_at: '2026-11-25T05:00:00.000Z' },
    },
  },
  errors: scoped(),
});

document({
  method: 'post',
  path: `${endpointPath}/test`,
  operationId: 'sendTestWebhookEvent',
  tag,
  summary: 'Send a test event',
  description:
    'Sends a `webhook.test` event (id `evt_test_…`) to the endpoint, even a switched-off one, to check a receiver. ' +
    'It is not recorded: it shows neither in the events nor in the delivery log.',
  pathId,
  responses: { 202: { description: 'Accepted; the event being sent.', schema: Event, example: exampleEvents['webhook.test'] } },
  errors: scoped(),
});

document({
  method: 'get',
  path: `${endpointPath}/deliveries`,
  operationId: 'listWebhookDeliveryAttempts',
  tag,
  summary: 'List delivery attempts',
  description: 'The delivery log, kept 30 days: one line per attempt, newest first. `event_id` finds the attempts of one event.',
  pathId,
  query: DeliveryLogQuery,
  responses: {
    200: {
      description: 'A page of attempts.',
      schema: listOf(WebhookDeliveryAttempt).openapi('WebhookDeliveryAttemptList'),
      example: { object: 'list', data: [exampleDeliveryAttempt], has_more: false },
    },
  },
  errors: scoped(),
});

document({
  method: 'post',
  path: `${endpointPath}/deliveries/resend`,
  operationId: 'resendWebhookEvent',
  tag,
  summary: 'Resend an event',
  description: 'Delivers a recorded event to this endpoint again, e.g. after the receiver was repaired. The endpoint must be switched on.',
  pathId,
  request: { schema: ResendRequest, example: { event_id: EXAMPLE_IDS.event } },
  responses: {
    202: {
      description: 'Accepted; the attempt shows in the delivery log shortly.',
      schema: ResendAccepted,
      example: { object: 'webhook_resend', endpoint_id: EXAMPLE_IDS.webhookEndpoint, event_id: EXAMPLE_IDS.event },
    },
  },
  errors: scoped(),
});
