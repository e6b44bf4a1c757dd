import { z } from './zod';
import { EventId, Timestamp } from './api';
import { Event, RECORDED_EVENT_TYPES, type EventType } from './events';
import { idPattern } from './ids';

/** Webhook limits and retries (docs/guide.md "Webhooks"), in one place for the API and the dispatcher. */
export const WEBHOOK_LIMITS = {
  endpointsPerMode: 5,
  urlLengthMax: 2048,
  /** Waits before attempts 1…8 (docs/guide.md "Webhooks"); the length is the number of attempts. */
  retryWaitsMs: [0, 60_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 6 * 3600_000, 12 * 3600_000, 24 * 3600_000],
  /** Each wait may be stretched by at most this fraction, so retries of many events spread out. */
  retryJitterMax: 0.1,
  responseTimeoutMs: 10_000,
  disableAfterFailingMs: 72 * 3600_000,
  failureEmailIntervalMs: 24 * 3600_000,
  previousSecretOverlapMs: 24 * 3600_000,
  /**
   * Replaced secrets still inside their overlap that an endpoint may have: each keeps signing for
   * its full 24 hours, so a further rotation is refused until the oldest has expired.
   */
  replacedSecretsMax: 4,
  deliveryLogRetentionMs: 30 * 24 * 3600_000,
} as const;

export const WebhookEndpointId = z.string().regex(idPattern('webhookEndpoint'), 'must be a webhook endpoint id (we_…)');

/** The recorded types: webhook.test is sent only by the send-test-event action, so no endpoint selects it. */
export const SUBSCRIBABLE_EVENT_TYPES = RECORDED_EVENT_TYPES;

/** `["*"]` selects every type, including types added later (the default is all). */
export const ALL_EVENT_TYPES = '*';

/** An endpoint with no selected types receives every type (the default is all). */
export function receivesEventType(enabledEvents: readonly string[], type: EventType): boolean {
  return enabledEvents.length === 0 || enabledEvents.includes(type);
}

export const EnabledEvents = z
  .array(z.enum([ALL_EVENT_TYPES, ...SUBSCRIBABLE_EVENT_TYPES]))
  .min(1)
  .max(SUBSCRIBABLE_EVENT_TYPES.length)
  .refine((types) => !types.includes(ALL_EVENT_TYPES) || types.length === 1, { message: '"*" cannot be combined with other types' })
  .refine((types) => new Set(types).size === types.length, { message: 'must not repeat a type' });

const WebhookUrl = z.string().min(1).max(WEBHOOK_LIMITS.urlLengthMax);

export const CreateWebhookEndpointRequest = z
  .strictObject({
    url: WebhookUrl,
    enabled_events: EnabledEvents.optional(),
  })
  .openapi('CreateWebhookEndpointRequest');
export type CreateWebhookEndpointRequest = z.infer<typeof CreateWebhookEndpointRequest>;

export const UpdateWebhookEndpointRequest = z
  .strictObject({
    url: WebhookUrl.optional(),
    enabled_events: EnabledEvents.optional(),
    /** true switches an endpoint back on after it was switched off by hand or for failing. */
    enabled: z.boolean().optional(),
  })
  .refine((r) => Object.keys(r).length > 0, { message: 'give at least one of url, enabled_events, enabled' })
  .openapi('UpdateWebhookEndpointRequest');
export type UpdateWebhookEndpointRequest = z.infer<typeof UpdateWebhookEndpointRequest>;

export const DISABLED_REASONS = ['manual', 'failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

export const WebhookEndpoint = z
  .object({
    id: WebhookEndpointId,
    object: z.literal('webhook_endpoint'),
    livemode: z.boolean(),
    url: z.string(),
    enabled_events: z.array(z.string()),
    enabled: z.boolean(),
    disabled_reason: z.enum(DISABLED_REASONS).nullable(),
    /** Start of the current run of failed attempts; after 72 hours of it the endpoint is switched off. */
    failing_since: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .openapi('WebhookEndpoint');
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

const SigningSecret = z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/);

/** The answer that created an endpoint: the endpoint and its signing secret (GET …/secret shows it again). */
export const CreatedWebhookEndpoint = WebhookEndpoint.extend({ secret: SigningSecret }).openapi('CreatedWebhookEndpoint');
export type CreatedWebhookEndpoint = z.infer<typeof CreatedWebhookEndpoint>;

export const DeletedWebhookEndpoint = z
  .object({
    id: WebhookEndpointId,
    object: z.literal('webhook_endpoint'),
    deleted: z.literal(true),
  })
  .openapi('DeletedWebhookEndpoint');

export const WebhookEndpointSecret = z
  .object({
    object: z.literal('webhook_endpoint_secret'),
    secret: SigningSecret,
    /**
     * While set, deliveries also carry a signature per replaced secret still inside its 24 hours;
     * this is when the last of them stops signing.
     */
    previous_secret_expires_at: Timestamp.nullable(),
  })
  .openapi('WebhookEndpointSecret');
export type WebhookEndpointSecret = z.infer<typeof WebhookEndpointSecret>;

/**
 * webhook_endpoints.previous_secrets: the replaced signing secrets (sealed) still inside their
 * overlap, newest first. orders-api writes it on rotation; the dispatcher signs with each entry
 * whose expires_at is still ahead. Not part of the API.
 */
export const ReplacedSecrets = z.array(z.object({ secret_encrypted: z.string().min(1), expires_at: Timestamp }));
export type ReplacedSecrets = z.infer<typeof ReplacedSecrets>;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One line of an endpoint's delivery log: one HTTP attempt. Response bodies are never kept. */
export const WebhookDeliveryAttempt = z
  .object({
    id: z.string().regex(/^dla_[0-9]+$/),
    object: z.literal('webhook_delivery_attempt'),
    livemode: z.boolean(),
    endpoint_id: WebhookEndpointId,
    event_id: EventId,
    event_type: z.string(),
    attempt: z.int().min(1),
    status_code: z.int().nullable(),
    duration_ms: z.int().min(0),
    error: z.string().nullable(),
    attempted_at: Timestamp,
    /** Where the delivery of this event to this endpoint stands now. */
    delivery_status: z.enum(DELIVERY_STATUSES),
  })
  .openapi('WebhookDeliveryAttempt');
export type WebhookDeliveryAttempt = z.infer<typeof WebhookDeliveryAttempt>;

export const DeliveryLogQuery = z.strictObject({
  event_id: EventId.optional().openapi({ description: 'Only the attempts to deliver this event.' }),
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: 'How many attempts a page holds at most.' }),
  starting_after: z
    .string()
    .regex(/^dla_[0-9]{1,18}$/, 'must be a delivery attempt id (dla_…)')
    .optional()
    .openapi({ description: 'The id of the last attempt you have: the page starts after it.' }),
});

export const ResendRequest = z.strictObject({ event_id: EventId }).openapi('ResendRequest');
export type ResendRequest = z.infer<typeof ResendRequest>;

/** The 202 answer to a resend: the attempt happens shortly and shows in the delivery log. */
export const ResendAccepted = z
  .object({
    object: z.literal('webhook_resend'),
    endpoint_id: WebhookEndpointId,
    event_id: EventId,
  })
  .openapi('ResendAccepted');

/** webhook.test event ids: `evt_test_…`, never recorded, so never in GET /v1/events or a delivery log. */
export const TEST_EVENT_ID_PREFIX = 'evt_test_';

/**
 * orders-api → dispatcher requests, through the outbox. The dispatcher alone sends webhooks and
 * writes deliveries (docs/ARCHITECTURE.md "Who writes which table"), so the API asks rather than acts.
 */
export const WebhookRequest = z.discriminatedUnion('type', [
  z.object({ type: z.literal('webhook.send_test'), endpoint_id: WebhookEndpointId, event: Event }),
  z.object({ type: z.literal('webhook.resend'), endpoint_id: WebhookEndpointId, event_id: EventId }),
]);
export type WebhookRequest = z.infer<typeof WebhookRequest>;
