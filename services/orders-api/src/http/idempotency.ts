import { AppError } from '@pmatch/contracts';
import type { Request } from 'express';
import { IDEMPOTENCY_KEY_PATTERN, requestFingerprint } from '../domain/idempotency';
import type { IdempotentRequest } from '../use-cases/idempotency';

/** The Idempotency-Key header, when sent; a malformed one is a 400. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new AppError('parameter_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', { param: 'Idempotency-Key' });
  }
  return key;
}

/** The key, remembered per API key, with what makes a repeat the same request: its method, path and JSON body. */
export function idempotentRequest(req: Request, apiKeyId: string, key: string | undefined): IdempotentRequest | undefined {
  return key === undefined ? undefined : { apiKeyId, key, fingerprint: requestFingerprint(req.method, req.path, req.body) };
}
