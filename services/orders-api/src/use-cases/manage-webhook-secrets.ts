import { AppError, WEBHOOK_LIMITS, type WebhookEndpointSecret } from '@pmatch/contracts';
import type { WebhookEndpointRow } from '@pmatch/db';
import { SecretNotOpened, newSigningSecret, type SecretOwner } from '@pmatch/platform';
import type { Actor } from '../domain/actor';
import { lastReplacedSecretExpiry, nextRotationPossibleAt, previousSecretExpiry } from '../domain/webhook-endpoints';
import { replaceWebhookSecret } from '../data/webhook-endpoints';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { OrdersApiDeps } from './deps';
import { findVisibleWebhookEndpoint } from './manage-webhook-endpoints';

/** A rotation refused while the most replaced secrets still sign; `retryAfterSeconds` says when it can succeed. */
export class RotationLimitReached extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    possibleAt: Date,
  ) {
    super(
      'rate_limited',
      `This endpoint already has ${WEBHOOK_LIMITS.replacedSecretsMax} replaced secrets that still sign for their promised 24 hours; ` +
        `the next rotation is possible at ${possibleAt.toISOString()}.`,
    );
  }
}

/**
 * The endpoint's signing secret. It forges deliveries, so an actor who may only read cannot see it.
 * A sealed secret that does not open for this endpoint (copied from another row, or sealed under a
 * key no longer configured) is 409 `secret_unavailable`, naming nothing of it; a rotation mends it.
 */
export async function revealWebhookSecret(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'secretBox'>,
  actor: Actor,
  rawId: string | undefined,
  audit?: AuditContext,
): Promise<WebhookEndpointSecret> {
  if (actor.permission !== 'read_write') throw new AppError('insufficient_scope', 'Reading a signing secret needs a read-write key.');
  const endpoint = await findVisibleWebhookEndpoint(deps, actor, rawId);
  const secret: WebhookEndpointSecret = {
    object: 'webhook_endpoint_secret',
    secret: openForEndpoint(deps, endpoint),
    previous_secret_expires_at: lastReplacedSecretExpiry(endpoint, deps.clock.now())?.toISOString() ?? null,
  };
  // The audit row commits before anyone sees the secret.
  if (audit !== undefined) {
    await inAuditedTransaction(
      deps,
      audit,
      async () => undefined,
      () => ({ action: 'webhook_endpoint.reveal_secret', objectId: endpoint.id, detail: {} }),
    );
  }
  return secret;
}

/** Replaces the signing secret of an endpoint the actor may see; the replaced one signs for 24 more hours. */
export async function rotateWebhookSecret(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'secretBox'>,
  endpoint: WebhookEndpointRow,
  audit?: AuditContext,
): Promise<WebhookEndpointSecret> {
  const secret = newSigningSecret();
  const now = deps.clock.now();
  const sealed = deps.secretBox.seal(secret, ownerOf(endpoint));
  const rotated = await inAuditedTransaction(
    deps,
    audit,
    (tx) => replaceWebhookSecret(tx, endpoint.id, sealed, now, previousSecretExpiry(now)),
    () => ({ action: 'webhook_endpoint.rotate_secret', objectId: endpoint.id, detail: {} }),
  );
  if (rotated === null) {
    const possibleAt = nextRotationPossibleAt(endpoint, now) ?? now;
    throw new RotationLimitReached(Math.max(1, Math.ceil((possibleAt.getTime() - now.getTime()) / 1000)), possibleAt);
  }
  return { object: 'webhook_endpoint_secret', secret, previous_secret_expires_at: lastReplacedSecretExpiry(rotated, now)?.toISOString() ?? null };
}

const ownerOf = (endpoint: Pick<WebhookEndpointRow, 'id'>): SecretOwner => ({ kind: 'webhook_endpoint', id: endpoint.id });

function openForEndpoint(deps: Pick<OrdersApiDeps, 'secretBox'>, endpoint: WebhookEndpointRow): string {
  try {
    return deps.secretBox.open(endpoint.secretEncrypted, ownerOf(endpoint));
  } catch (error) {
    if (!(error instanceof SecretNotOpened)) throw error;
    throw new AppError('secret_unavailable', "This endpoint's signing secret cannot be read; rotate it (POST …/rotate-secret) to get a new one.", {
      cause: error,
    });
  }
}
