import { createHash } from 'node:crypto';

/** DESIGN: idempotency keys are remembered 24 hours. */
export const IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** A request still "in progress" after this long died mid-way; its key may be taken over. */
export const IDEMPOTENCY_IN_PROGRESS_LEASE_MS = 60 * 1000;
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The same request means the same method, path and JSON body, whatever the key order. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body)}`).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Only final answers are replayed: a 5xx (or a 409 for a key in use) leaves the key free to retry. */
export function isReplayable(status: number): boolean {
  return status < 500 && status !== 409;
}
