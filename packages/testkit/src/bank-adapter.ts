import { createHmac, randomUUID } from 'node:crypto';
import { BANK_ADAPTER_ID_HEADER } from '@pmatch/contracts';

/** A bank adapter as `ops adapter create` makes it: the id it names itself by, and its signing secret. */
export interface AdapterCredentials {
  id: string;
  secret: string;
}

/** The credentials in `ops adapter create`'s answer. */
export function adapterCredentials(created: Record<string, unknown>): AdapterCredentials {
  if (typeof created.id !== 'string' || typeof created.secret !== 'string') throw new Error(`not a created adapter: ${Object.keys(created).join(', ')}`);
  return { id: created.id, secret: created.secret };
}

/**
 * The headers a bank adapter sends `body` to bank-ingest with: `bank-adapter-id` naming it, and the
 * Standard Webhooks signature over the raw bytes (HMAC-SHA256 of `id.timestamp.` and the body,
 * keyed by the secret's base64 part).
 */
export function adapterHeaders(
  adapter: AdapterCredentials,
  body: string | Uint8Array,
  options: { messageId?: string; at?: Date } = {},
): Record<string, string> {
  const id = options.messageId ?? `msg_${randomUUID()}`;
  const timestamp = String(Math.floor((options.at ?? new Date()).getTime() / 1000));
  const hmac = createHmac('sha256', Buffer.from(adapter.secret.replace(/^whsec_/, ''), 'base64'));
  hmac.update(`${id}.${timestamp}.`);
  hmac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return {
    [BANK_ADAPTER_ID_HEADER]: adapter.id,
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${hmac.digest('base64')}`,
  };
}
