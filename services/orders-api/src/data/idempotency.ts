import type { Mode } from '@pmatch/contracts';
import { statement, type Sql } from '@pmatch/db';
import { IDEMPOTENCY_KEY_LIFETIME_MS } from '../domain/idempotency';

export type KeyState =
  | { state: 'new' }
  | { state: 'in_use' }
  | { state: 'reused' }
  | { state: 'completed'; status: number; body: unknown };

export interface KeyId {
  organisationId: string;
  mode: Mode;
  key: string;
}

const lockKey = statement('orders_api.lock_idempotency_key', 'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS held');

const readKey = statement(
  'orders_api.read_idempotency_key',
  `SELECT request_hash, response_status, response_body, created_at
   FROM idempotency_keys WHERE organisation_id = $1 AND mode = $2 AND key = $3`,
);

// A row still there is one past its 24 hours (holdKey found it forgotten): it is replaced.
const writeKey = statement(
  'orders_api.store_idempotency_answer',
  `INSERT INTO idempotency_keys (organisation_id, mode, key, request_hash, response_status, response_body, created_at)
   VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
   ON CONFLICT (organisation_id, mode, key) DO UPDATE
   SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
       response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at`,
);

/**
 * Holds an idempotency key for the caller's DB transaction and tells what it holds. The hold is a
 * transaction-scoped advisory lock: a second request with the key while the first runs is told so
 * at once (in_use) instead of waiting, and a request that fails or dies lets go of the key with
 * its transaction, leaving nothing behind. An answer stored more than 24 hours ago is forgotten.
 * The key is read in a statement after the lock's: its snapshot then sees the answer of a request
 * that held the key and has committed (one statement would read from before it took the lock).
 */
export async function holdKey(tx: Sql, id: KeyId, fingerprint: string, now: Date): Promise<KeyState> {
  const [lock] = await tx.rows<{ held: boolean }>(lockKey, [`idempotency ${id.organisationId} ${id.mode} ${id.key}`]);
  if (lock?.held !== true) return { state: 'in_use' };
  const [stored] = await tx.rows<{ request_hash: string; response_status: number; response_body: unknown; created_at: Date }>(readKey, [
    id.organisationId,
    id.mode,
    id.key,
  ]);
  if (stored === undefined || stored.created_at.getTime() < now.getTime() - IDEMPOTENCY_KEY_LIFETIME_MS) return { state: 'new' };
  if (stored.request_hash !== fingerprint) return { state: 'reused' };
  return { state: 'completed', status: stored.response_status, body: stored.response_body };
}

/** Stores the answer under the key held in this DB transaction, so both commit or neither does. */
export async function storeAnswer(tx: Sql, id: KeyId, fingerprint: string, answer: { status: number; body: unknown }, now: Date): Promise<void> {
  await tx.count(writeKey, [id.organisationId, id.mode, id.key, fingerprint, answer.status, JSON.stringify(answer.body), now]);
}
