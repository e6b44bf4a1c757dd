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
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The newest secret first; the replaced one while its 24 hours of overlap last. */
export function signingSecrets(endpoint: EndpointSecrets, at: Date): string[] {
  const overlapping = endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > at;
  return overlapping ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
}

/** The headers of one delivery attempt (spec "Delivery format"); the body is signed as sent. */
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
