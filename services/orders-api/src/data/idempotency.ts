import type { Mode } from '@pmatch/contracts';
import type { Prisma, Tx } from '@pmatch/db';
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

/**
 * Holds an idempotency key for the caller's DB transaction and tells what it holds. The hold is a
 * transaction-scoped advisory lock: a second request with the key while the first runs is told so
 * at once (in_use) instead of waiting, and a request that fails or dies lets go of the key with
 * its transaction, leaving nothing behind. An answer stored more than 24 hours ago is forgotten.
 */
export async function holdKey(tx: Tx, id: KeyId, fingerprint: string, now: Date): Promise<KeyState> {
  const [lock] = await tx.$queryRaw<{ held: boolean }[]>`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${`idempotency ${id.organisationId} ${id.mode} ${id.key}`}, 0)) AS held`;
  if (lock?.held !== true) return { state: 'in_use' };
  const stored = await tx.idempotencyKey.findUnique({ where: { organisationId_mode_key: id } });
  if (stored === null || stored.createdAt.getTime() < now.getTime() - IDEMPOTENCY_KEY_LIFETIME_MS) return { state: 'new' };
  if (stored.requestHash !== fingerprint) return { state: 'reused' };
  return { state: 'completed', status: stored.responseStatus, body: stored.responseBody };
}

/** Stores the answer under the key held in this DB transaction, so both commit or neither does. */
export async function storeAnswer(tx: Tx, id: KeyId, fingerprint: string, answer: { status: number; body: unknown }, now: Date): Promise<void> {
  const stored = { requestHash: fingerprint, responseStatus: answer.status, responseBody: answer.body as Prisma.InputJsonValue, createdAt: now };
  // A row still there is one past its 24 hours (holdKey found it forgotten): it is replaced.
  await tx.idempotencyKey.upsert({ where: { organisationId_mode_key: id }, create: { ...id, ...stored }, update: stored });
}
