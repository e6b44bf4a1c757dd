import { AppError } from '@pmatch/contracts';
import type { Database, Sql } from '@pmatch/db';
import type { Request } from 'express';
import type { AuthContext } from '../domain/auth';
import { IDEMPOTENCY_KEY_PATTERN, requestFingerprint } from '../domain/idempotency';
import { holdKey, storeAnswer } from '../data/idempotency';

export interface Answer {
  status: number;
  body: unknown;
}

/** The Idempotency-Key header, when sent; a malformed one is a 400. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new AppError('parameter_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', { param: 'Idempotency-Key' });
  }
  return key;
}

/**
 * Answers a request at most once per Idempotency-Key (spec endpoint rule 1; DESIGN: 24 hours per
 * organisation and mode). `answer` runs in one DB transaction with the key, and its answer is
 * stored in that transaction: the order, its events and the stored answer commit together, so a
 * retry after any failure finds either all of them or none. A repeat with the same body gets the
 * stored answer (`replayed`); another body is 400 idempotency_key_reused; a repeat while the first
 * still runs is 409 idempotency_key_in_use. An error answer stores nothing: the retry runs again.
 *
 * Without a key there is nothing to store, and `answer` runs on the pool outside a transaction
 * (no BEGIN and COMMIT round trips): it must make its change in one statement, as creating an
 * order does (its reads, then one INSERT of the order with its event and messages), and may write
 * it together with other requests' (`inTransaction` false).
 */
export async function answerOnce(
  database: Database,
  request: { req: Request; auth: AuthContext; key: string | undefined; now: Date },
  answer: (sql: Sql, inTransaction: boolean) => Promise<Answer>,
): Promise<Answer & { replayed: boolean }> {
  const { req, auth, key, now } = request;
  if (key === undefined) return { ...(await answer(database.sql, false)), replayed: false };
  const id = { organisationId: auth.organisationId, mode: auth.mode, key };
  const fingerprint = requestFingerprint(req.method, req.path, req.body);
  return database.transaction(async (tx) => {
    const held = await holdKey(tx, id, fingerprint, now);
    if (held.state === 'in_use') {
      throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.');
    }
    if (held.state === 'reused') {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.', { param: 'Idempotency-Key' });
    }
    if (held.state === 'completed') return { status: held.status, body: held.body, replayed: true };
    const given = await answer(tx, true);
    await storeAnswer(tx, id, fingerprint, given, now);
    return { ...given, replayed: false };
  });
}
