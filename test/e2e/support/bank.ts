import { createHmac, randomUUID } from 'node:crypto';
import { type TestSystem, api, type ApiResponse } from '@pmatch/testkit';

/**
 * A bank adapter's request to bank-ingest, signed as Standard Webhooks over the raw bytes:
 * HMAC-SHA256 of `id.timestamp.` and the body under the secret's key.
 */
export async function signedPost(
  system: TestSystem,
  path: string,
  secret: string,
  body: string | Uint8Array,
  contentType = 'application/json',
): Promise<ApiResponse> {
  const id = `msg_${randomUUID()}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const hmac = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'));
  hmac.update(`${id}.${timestamp}.`);
  hmac.update(bytes);
  const res = await fetch(`${system.url('bank-ingest')}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${hmac.digest('base64')}` },
    body: bytes,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: the test sees the text.
  }
  return { status: res.status, headers: res.headers, body: parsed as any };
}

export const notify = (system: TestSystem, secret: string, notification: Record<string, unknown>) =>
  signedPost(system, '/ingest/v1/notifications', secret, JSON.stringify(notification));

/** A live account of the organisation, as `ops bank-account add` makes it. */
export async function liveAccount(
  system: TestSystem,
  orgId: string,
  fields: { bank?: string; branch?: string; type?: string; number: string; holder?: string },
): Promise<string> {
  return String((await system.addLiveBankAccount(orgId, fields)).id);
}

export { api };
