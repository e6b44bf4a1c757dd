import { AppError } from '@pmatch/contracts';
import type { Database, Sql } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import { holdKey, storeAnswer } from '../data/idempotency';

/** An answer as stored under an idempotency key. */
export interface StoredAnswer {
  status: number;
  body: unknown;
}

/**
 * A request's Idempotency-Key, the API key that sent it (a key is remembered per API key, so one
 * scoped to another bank account never gets this one's answer) and what makes it the same request
 * (`requestFingerprint`).
 */
export interface IdempotentRequest {
  apiKeyId: string;
  key: string;
  fingerprint: string;
}

/**
 * Answers at most once per idempotency key (24 hours per API key): `answer` runs in
 * one DB transaction with the key and its answer is stored in it. A repeat gets the stored answer
 * (`replayed`), another request under the key 400, a concurrent one 409; an error stores nothing.
 * Without a key, `answer` runs on the pool with no transaction, so it must write in one statement.
 */
export async function answerOnce(
  database: Database,
  request: { scope: Pick<Scope, 'organisationId' | 'mode'>; idempotency: IdempotentRequest | undefined; now: Date },
  answer: (sql: Sql, inTransaction: boolean) => Promise<StoredAnswer>,
): Promise<StoredAnswer & { replayed: boolean }> {
  const { scope, idempotency, now } = request;
  if (idempotency === undefined) return { ...(await answer(database.sql, false)), replayed: false };
  const id = { apiKeyId: idempotency.apiKeyId, organisationId: scope.organisationId, mode: scope.mode, key: idempotency.key };
  return database.transaction(async (tx) => {
    const held = await holdKey(tx, id, idempotency.fingerprint, now);
    if (held.state === 'in_use') {
      throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.');
    }
    if (held.state === 'reused') {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.', { param: 'Idempotency-Key' });
    }
    if (held.state === 'completed') return { status: held.status, body: held.body, replayed: true };
    const given = await answer(tx, true);
    await storeAnswer(tx, id, idempotency.fingerprint, given, now);
    return { ...given, replayed: false };
  });
}
