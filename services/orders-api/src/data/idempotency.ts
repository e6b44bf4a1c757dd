import type { Mode } from '@pmatch/contracts';
import type { Prisma, PrismaClient } from '@pmatch/db';
import { IDEMPOTENCY_IN_PROGRESS_LEASE_MS, IDEMPOTENCY_KEY_LIFETIME_MS } from '../domain/idempotency';

export type KeyClaim =
  | { state: 'claimed' }
  | { state: 'in_progress' }
  | { state: 'reused' }
  | { state: 'completed'; status: number; body: unknown };

interface KeyId {
  organisationId: string;
  mode: Mode;
  key: string;
}

/**
 * Claims an idempotency key for a request. A key older than its lifetime, or left in progress
 * past the lease by a request that died, is taken over; otherwise the first claim wins.
 */
export async function claimKey(prisma: PrismaClient, id: KeyId, fingerprint: string, now: Date): Promise<KeyClaim> {
  const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_KEY_LIFETIME_MS);
  const abandonedBefore = new Date(now.getTime() - IDEMPOTENCY_IN_PROGRESS_LEASE_MS);
  const claimed = await prisma.$executeRaw`
    INSERT INTO idempotency_keys (organisation_id, mode, key, request_hash, created_at)
    VALUES (${id.organisationId}, ${id.mode}, ${id.key}, ${fingerprint}, ${now})
    ON CONFLICT (organisation_id, mode, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL, created_at = EXCLUDED.created_at
      WHERE idempotency_keys.created_at < ${expiredBefore}
         OR (idempotency_keys.response_status IS NULL AND idempotency_keys.created_at < ${abandonedBefore})`;
  if (claimed === 1) return { state: 'claimed' };
  const existing = await prisma.idempotencyKey.findUnique({ where: { organisationId_mode_key: id } });
  if (existing === null) return claimKey(prisma, id, fingerprint, now);
  if (existing.requestHash !== fingerprint) return { state: 'reused' };
  if (existing.responseStatus === null) return { state: 'in_progress' };
  return { state: 'completed', status: existing.responseStatus, body: existing.responseBody };
}

export async function completeKey(prisma: PrismaClient, id: KeyId, status: number, body: unknown): Promise<void> {
  await prisma.idempotencyKey.update({
    where: { organisationId_mode_key: id },
    data: { responseStatus: status, responseBody: body as Prisma.InputJsonValue },
  });
}

export async function releaseKey(prisma: PrismaClient, id: KeyId): Promise<void> {
  await prisma.idempotencyKey.deleteMany({ where: id });
}
