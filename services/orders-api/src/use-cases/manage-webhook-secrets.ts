import { AppError, WEBHOOK_LIMITS, type WebhookEndpointSecret } from '@pmatch/contracts';
import type { Tx, WebhookEndpointRow } from '@pmatch/db';
import { SecretNotOpened, newSigningSecret, type SecretOwner } from '@pmatch/platform';
import type { Actor } from '../domain/actor';
import { lastReplacedSecretExpiry, nextRotationPossibleAt, previousSecretExpiry } from '../domain/webhook-endpoints';
import { replaceWebhookSecret } from '../data/webhook-endpoints';
import type { FailureThrottle } from '../data/login-throttle';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { ConsoleDeps } from './console-login';
import { confirmPassword, type Reentered } from './console-reauthenticate';
import type { OrdersApiDeps } from './deps';
import { keepToShowOnce, type ShowTo } from './shown-once';
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
): Promise<WebhookEndpointSecret> {
  if (actor.permission !== 'read_write') throw new AppError('insufficient_scope', 'Reading a signing secret needs a read-write key.');
  const endpoint = await findVisibleWebhookEndpoint(deps, actor, rawId);
  return secretOf(deps, endpoint);
}

function secretOf(deps: Pick<OrdersApiDeps, 'clock' | 'secretBox'>, endpoint: WebhookEndpointRow): WebhookEndpointSecret {
  return {
    object: 'webhook_endpoint_secret',
    secret: openForEndpoint(deps, endpoint),
    previous_secret_expires_at: lastReplacedSecretExpiry(endpoint, deps.clock.now())?.toISOString() ?? null,
  };
}

/**
 * The console's "show secret": once the admin has typed their password again, the secret is kept
 * to be shown once to their session (`displayId`), in the transaction that audits it.
 */
export async function showWebhookSecret(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  endpoint: WebhookEndpointRow,
  audit: AuditContext,
  password: string,
  showTo: ShowTo,
): Promise<Reentered<{ displayId: string }>> {
  const reentry = await confirmPassword(deps, throttle, audit, password);
  if (reentry !== 'confirmed') return { outcome: reentry };
  const secret = secretOf(deps, endpoint);
  const displayId = await inAuditedTransaction(
    deps,
    audit,
    (tx) => keepToShowOnce(deps, tx, showTo, 'webhook_secret', shownSecret(endpoint, secret, false)),
    () => ({ action: 'webhook_endpoint.reveal_secret', objectId: endpoint.id, detail: {} }),
  );
  return { outcome: 'done', displayId };
}

/** Replaces the signing secret of an endpoint the actor may see; the replaced one signs for 24 more hours. */
export async function rotateWebhookSecret(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'secretBox'>,
  endpoint: WebhookEndpointRow,
): Promise<WebhookEndpointSecret> {
  return (await rotate(deps, endpoint, undefined, async () => undefined)).secret;
}

/**
 * The console's "reissue secret": once the admin has typed their password again, the secret is
 * replaced and the new one kept to be shown once to their session (`displayId`), all in one
 * transaction with its audit row. A rotation refused (`RotationLimitReached`) throws.
 */
export async function rotateWebhookSecretShownOnce(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  endpoint: WebhookEndpointRow,
  audit: AuditContext,
  password: string,
  showTo: ShowTo,
): Promise<Reentered<{ displayId: string }>> {
  const reentry = await confirmPassword(deps, throttle, audit, password);
  if (reentry !== 'confirmed') return { outcome: reentry };
  const { kept } = await rotate(deps, endpoint, audit, (tx, secret) => keepToShowOnce(deps, tx, showTo, 'webhook_secret', shownSecret(endpoint, secret, true)));
  return { outcome: 'done', displayId: kept };
}

async function rotate<T>(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'secretBox'>,
  endpoint: WebhookEndpointRow,
  audit: AuditContext | undefined,
  keep: (tx: Tx, secret: WebhookEndpointSecret) => Promise<T>,
): Promise<{ secret: WebhookEndpointSecret; kept: T }> {
  const secret = newSigningSecret();
  const now = deps.clock.now();
  const sealed = deps.secretBox.seal(secret, ownerOf(endpoint));
  const rotated = await inAuditedTransaction(
    deps,
    audit,
    async (tx) => {
      const row = await replaceWebhookSecret(tx, endpoint.id, sealed, now, previousSecretExpiry(now));
      if (row === null) return null;
      const shown: WebhookEndpointSecret = {
        object: 'webhook_endpoint_secret',
        secret,
        previous_secret_expires_at: lastReplacedSecretExpiry(row, now)?.toISOString() ?? null,
      };
      return { secret: shown, kept: await keep(tx, shown) };
    },
    () => ({ action: 'webhook_endpoint.rotate_secret', objectId: endpoint.id, detail: {} }),
  );
  if (rotated === null) {
    const possibleAt = nextRotationPossibleAt(endpoint, now) ?? now;
    throw new RotationLimitReached(Math.max(1, Math.ceil((possibleAt.getTime() - now.getTime()) / 1000)), possibleAt);
  }
  return rotated;
}

const shownSecret = (endpoint: WebhookEndpointRow, secret: WebhookEndpointSecret, rotated: boolean) => ({
  endpointId: endpoint.id,
  secret: secret.secret,
  previousSecretExpiresAt: secret.previous_secret_expires_at,
  rotated,
});

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
