import { createHmac, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Webhook } from 'standardwebhooks';

/**
 * Where bank-ingest is, the adapter's id (`adp_…`) and its secret (`whsec_…`), both printed by
 * `ops adapter create` (the secret only then).
 */
export interface AdapterConfig {
  ingestUrl: string;
  adapterId: string;
  secret: string;
  /** Pause before attempt n (1-based) is retried; default 1 s, doubling, at most 60 s. */
  backoffMs?: (attempt: number) => number;
  /** Give up after this many attempts (default: never, as a bank's queue would keep the message). */
  maxAttempts?: number;
  fetch?: typeof fetch;
}

export interface Answer {
  status: number;
  body: unknown;
  attempts: number;
  /** The webhook-id every attempt carried. */
  id: string;
}

/**
 * Standard Webhooks over raw bytes: base64 HMAC-SHA256 of `id.timestamp.` and the bytes, under the
 * secret's key. `standardwebhooks` gives the same for UTF-8 text, but decodes a Buffer as UTF-8
 * first, which changes Shift_JIS bytes; a Zengin file must be signed as bytes.
 */
export function signBytes(secret: string, id: string, timestamp: Date, bytes: Uint8Array): string {
  const hmac = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'));
  hmac.update(`${id}.${Math.floor(timestamp.getTime() / 1000)}.`);
  hmac.update(bytes);
  return `v1,${hmac.digest('base64')}`;
}

/** The header naming the adapter on every request (its id from `ops adapter create`). */
export const ADAPTER_ID_HEADER = 'bank-adapter-id';

/** One deposit or withdrawal, as `POST /ingest/v1/notifications` takes it. */
export interface Notification {
  bank_account_id?: string;
  account?: { bank_code: string; branch_code: string; account_type: 'ordinary' | 'current' | 'savings'; account_number: string };
  bank_reference: string;
  direction: 'deposit' | 'withdrawal';
  amount: number;
  counterparty: string;
  occurred_at: string;
}

/**
 * The canonical bank reference of a deposit seen in a Zengin record (勘定日 YYYY-MM-DD, 照会番号,
 * 金額): a notification carrying it and the statement that later lists the deposit store one
 * transaction.
 */
export function zenginReference(bookingDay: string, inquiryNumber: string | number, amount: number): string {
  return `zengin:${bookingDay.replace(/-/g, '')}:${Number(inquiryNumber)}:${amount}`;
}

export function pushNotification(config: AdapterConfig, notification: Notification): Promise<Answer> {
  const body = JSON.stringify(notification);
  return deliver(config, '/ingest/v1/notifications', Buffer.from(body, 'utf8'), 'application/json', (id, at) => new Webhook(config.secret).sign(id, at, body));
}

/** A statement file (Zengin 01/03, camt.054/053) as the bank delivered it, byte for byte. */
export async function pushStatement(config: AdapterConfig, path: string, format?: 'zengin' | 'camt.054' | 'camt.053'): Promise<Answer> {
  const bytes = await readFile(path);
  const xml = format?.startsWith('camt') ?? bytes.subarray(0, 64).toString('latin1').trimStart().startsWith('<');
  const query = format === undefined ? '' : `?format=${format}`;
  return deliver(config, `/ingest/v1/statements${query}`, bytes, xml ? 'application/xml' : 'application/octet-stream', (id, at) =>
    signBytes(config.secret, id, at, bytes),
  );
}

/**
 * Sends until bank-ingest answers: any 2xx or 4xx is an answer (4xx: fix the input, sending it
 * again cannot help); a 5xx, a 429 or no answer at all is retried with the same webhook-id, signed
 * anew (the timestamp must be within 5 minutes), after the backoff or the answer's Retry-After,
 * whichever is longer. bank-ingest stores each transaction once by its bank reference, so a retry
 * of a request that did arrive stores nothing twice. Every request names the adapter in
 * `bank-adapter-id`: bank-ingest refuses one naming no active adapter before reading its body, and
 * checks the signature with that adapter's secret only.
 */
async function deliver(config: AdapterConfig, path: string, body: Buffer, contentType: string, sign: (id: string, at: Date) => string): Promise<Answer> {
  const id = `msg_${randomUUID()}`;
  const send = config.fetch ?? fetch;
  const backoff = config.backoffMs ?? ((attempt: number) => Math.min(1_000 * 2 ** (attempt - 1), 60_000));
  for (let attempt = 1; ; attempt++) {
    const at = new Date();
    let retryAfterMs = 0;
    try {
      const res = await send(`${config.ingestUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': contentType,
          [ADAPTER_ID_HEADER]: config.adapterId,
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': sign(id, at),
        },
        body: new Uint8Array(body),
      });
      const text = await res.text();
      if (res.status < 500 && res.status !== 429) return { status: res.status, body: parse(text), attempts: attempt, id };
      retryAfterMs = Math.min(Number(res.headers.get('retry-after') ?? 0) * 1_000, 300_000) || 0;
    } catch {
      // No answer (connection refused or reset, timeout): retried like a 5xx.
    }
    if (config.maxAttempts !== undefined && attempt >= config.maxAttempts) throw new Error(`no answer from bank-ingest after ${attempt} attempts (${id})`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(backoff(attempt), retryAfterMs)));
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
