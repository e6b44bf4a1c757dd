import type { Mode } from '@pmatch/contracts';
import { sql, preparedQuery, type Sql } from '@pmatch/db';
import { IDEMPOTENCY_KEY_LIFETIME_MS } from '../domain/idempotency';

export type KeyState = { state: 'new' } | { state: 'in_use' } | { state: 'reused' } | { state: 'completed'; status: number; body: unknown };

/** An Idempotency-Key as remembered: per API key (the organisation and mode are the key's). */
export interface KeyId {
  apiKeyId: string;
  organisationId: string;
  mode: Mode;
  key: string;
}

const lockKey = preparedQuery<{ lockName: string }, { held: boolean }>(
  'orders_api.lock_idempotency_key',
  (p) => sql`SELECT pg_try_advisory_xact_lock(hashtextextended(${p.lockName}, 0)) AS held`,
);

const readKey = preparedQuery<Pick<KeyId, 'apiKeyId' | 'key'>, { request_hash: string; response_status: number; response_body: unknown; created_at: Date }>(
  'orders_api.read_idempotency_key',
  (p) => sql`SELECT request_hash, response_status, response_body, created_at
   FROM idempotency_keys WHERE api_key_id = ${p.apiKeyId} AND key = ${p.key}`,
);

// A row still there is one past its 24 hours (holdKey found it forgotten): it is replaced.
const writeKey = preparedQuery<KeyId & { fingerprint: string; status: number; body: string; now: Date }>(
  'orders_api.store_idempotency_answer',
  (p) => sql`INSERT INTO idempotency_keys (api_key_id, organisation_id, mode, key, request_hash, response_status, response_body, created_at)
   VALUES (${p.apiKeyId}, ${p.organisationId}, ${p.mode}, ${p.key}, ${p.fingerprint}, ${p.status}, ${p.body}::jsonb, ${p.now})
   ON CONFLICT (api_key_id, key) DO UPDATE
   SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
       response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at`,
);

/**
 * Holds an idempotency key for the caller's DB transaction (an advisory lock that ends with it)
 * and tells what it holds: `in_use` at once while another request holds it. An answer stored more
 * than 24 hours ago is forgotten. The key is read after the lock, in a statement of its own, so
 * that it sees the answer of the request that held it before.
 */
export async function holdKey(tx: Sql, id: KeyId, fingerprint: string, now: Date): Promise<KeyState> {
  const [lock] = await tx.rows(lockKey, { lockName: `idempotency ${id.apiKeyId} ${id.key}` });
  if (lock?.held !== true) return { state: 'in_use' };
  const [stored] = await tx.rows(readKey, { apiKeyId: id.apiKeyId, key: id.key });
  if (stored === undefined || stored.created_at.getTime() < now.getTime() - IDEMPOTENCY_KEY_LIFETIME_MS) return { state: 'new' };
  if (stored.request_hash !== fingerprint) return { state: 'reused' };
  return { state: 'completed', status: stored.response_status, body: stored.response_body };
}

/** Stores the answer under the key held in this DB transaction, so both commit or neither does. */
export async function storeAnswer(tx: Sql, id: KeyId, fingerprint: string, answer: { status: number; body: unknown }, now: Date): Promise<void> {
  await tx.count(writeKey, { ...id, fingerprint, status: answer.status, body: JSON.stringify(answer.body), now });
}
