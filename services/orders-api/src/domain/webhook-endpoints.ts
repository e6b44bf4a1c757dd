import {
  ALL_EVENT_TYPES,
  ReplacedSecrets,
  TEST_EVENT_ID_PREFIX,
  WEBHOOK_LIMITS,
  randomBase62,
  type DeliveryStatus,
  type DisabledReason,
  type Event,
  type Mode,
  type WebhookDeliveryAttempt,
  type WebhookEndpoint,
} from '@pmatch/contracts';
import type { WebhookEndpointRow } from '@pmatch/db';

/** Stored as no types at all, so "all" keeps meaning all when new types are added. */
export function storedEnabledEvents(requested: readonly string[] | undefined): string[] {
  if (requested === undefined || requested.includes(ALL_EVENT_TYPES)) return [];
  return [...requested];
}

export function webhookEndpointView(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    livemode: row.mode === 'live',
    url: row.url,
    enabled_events: row.enabledEvents.length === 0 ? [ALL_EVENT_TYPES] : row.enabledEvents,
    enabled: row.enabled,
    disabled_reason: row.disabledReason as DisabledReason | null,
    failing_since: row.failingSince?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * Switching on clears the run of failures, so a repaired endpoint gets a fresh 72 hours; switching
 * off by hand says so, which tells it apart from the automatic switch-off.
 */
export function enablementChange(
  row: Pick<WebhookEndpointRow, 'enabled'>,
  enabled: boolean | undefined,
): { enabled: boolean; disabledReason: DisabledReason | null; failingSince?: null } | undefined {
  if (enabled === undefined || enabled === row.enabled) return undefined;
  return enabled ? { enabled: true, disabledReason: null, failingSince: null } : { enabled: false, disabledReason: 'manual' };
}

export function previousSecretExpiry(now: Date): Date {
  return new Date(now.getTime() + WEBHOOK_LIMITS.previousSecretOverlapMs);
}

/**
 * `previous_secret_expires_at` of the secret view: when the last replaced secret still signing at
 * `now` stops signing, or null when only the current secret signs.
 */
export function lastReplacedSecretExpiry(row: Pick<WebhookEndpointRow, 'previousSecrets'>, now: Date): Date | null {
  const expiries = ReplacedSecrets.parse(row.previousSecrets)
    .map((r) => new Date(r.expires_at))
    .filter((expiresAt) => expiresAt > now);
  return expiries.length === 0 ? null : new Date(Math.max(...expiries.map((d) => d.getTime())));
}

/** When a rotation refused for too many overlapping secrets can succeed: the oldest one's expiry. */
export function nextRotationPossibleAt(row: Pick<WebhookEndpointRow, 'previousSecrets'>, now: Date): Date | null {
  const expiries = ReplacedSecrets.parse(row.previousSecrets)
    .map((r) => new Date(r.expires_at).getTime())
    .filter((expiresAt) => expiresAt > now.getTime());
  return expiries.length === 0 ? null : new Date(Math.min(...expiries));
}

/** The event the send-test-event action delivers; it is never recorded, so its id says "test". */
export function testEvent(mode: Mode, now: Date): Event {
  return {
    id: `${TEST_EVENT_ID_PREFIX}${randomBase62(24)}`,
    object: 'event',
    type: 'webhook.test',
    livemode: mode === 'live',
    created_at: now.toISOString(),
    data: { object: { message: 'This is a test event sent from your webhook endpoint settings.' } },
  };
}

export interface DeliveryAttemptRow {
  id: bigint;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  attempted_at: Date;
  event_id: string;
  event_type: string;
  delivery_status: string;
}

export const DELIVERY_ATTEMPT_ID_PREFIX = 'dla_';

export function deliveryAttemptView(row: DeliveryAttemptRow, endpoint: Pick<WebhookEndpointRow, 'id' | 'mode'>): WebhookDeliveryAttempt {
  return {
    id: `${DELIVERY_ATTEMPT_ID_PREFIX}${row.id}`,
    object: 'webhook_delivery_attempt',
    livemode: endpoint.mode === 'live',
    endpoint_id: endpoint.id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error: row.error,
    attempted_at: row.attempted_at.toISOString(),
    delivery_status: row.delivery_status as DeliveryStatus,
  };
}
