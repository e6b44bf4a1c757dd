import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/**
 * Standard Webhooks signature header: `v1,<base64 HMAC-SHA256>` over `<id>.<timestamp>.<body>`,
 * keyed with the base64-decoded part of the secret after `whsec_`; one space-separated entry per
 * secret, so during a rotation a receiver holding either secret can verify.
 */
export function signatureHeader(secrets: readonly string[], webhookId: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
      const mac = createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
      return `v1,${mac}`;
    })
    .join(' ');
}

export interface EndpointSecrets {
  secret: string;
  /** Secrets replaced by rotations, each signing until its own expiry (24 hours after it was replaced). */
  replaced: readonly { secret: string; expiresAt: Date }[];
}

/**
 * The current secret first, then every replaced one still inside its overlap, newest first: a
 * receiver that has not yet switched to the newest secret keeps verifying for the 24 hours it was
 * promised, however many rotations came after.
 */
export function signingSecrets(endpoint: EndpointSecrets, at: Date): string[] {
  const overlapping = endpoint.replaced.filter((r) => r.expiresAt > at).sort((a, b) => b.expiresAt.getTime() - a.expiresAt.getTime());
  return [endpoint.secret, ...overlapping.map((r) => r.secret)];
}

/** The headers of one delivery attempt (docs/guide.md "Webhooks"); the body is signed as sent. */
export function deliveryHeaders(secrets: readonly string[], webhookId: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'pmatch-webhooks/1',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, webhookId, timestamp, body),
  };
}
