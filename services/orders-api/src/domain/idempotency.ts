import { createHash } from 'node:crypto';
import { AppError } from '@pmatch/contracts';
import { MAX_JSON_DEPTH } from '@pmatch/platform';

/** Idempotency keys are remembered 24 hours (docs/guide.md "Requests and errors"). */
export const IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The same request means the same method, path and JSON body, whatever the key order. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body, 0)}`)
    .digest('hex');
}

/**
 * JSON with object keys sorted. The HTTP front refuses bodies nested deeper than MAX_JSON_DEPTH;
 * the same bound here keeps the recursion shallow whatever the caller passes.
 */
function canonicalJson(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (depth >= MAX_JSON_DEPTH) {
    throw new AppError('parameter_invalid', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(',')}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k], depth + 1)}`)
    .join(',')}}`;
}
