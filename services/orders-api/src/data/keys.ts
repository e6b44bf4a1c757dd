import { apiKeyAccountIds, sql, preparedQuery, type ApiKeyRow, type Db, type Sql } from '@pmatch/db';

/** What a request's authentication needs of its API key. */
export type ActiveKey = {
  id: string;
  organisationId: string;
  mode: string;
  permission: string;
  bankAccountId: string | null;
  /** The bank accounts in the key's scope, oldest first (see `ApiKeyAuth.accountIds`). */
  accountIds: string[];
  /** Those of them that are dedicated transfer accounts. */
  dedicatedAccountIds: string[];
};

const findActiveKey = preparedQuery<{ keyHash: string }, ActiveKey>(
  'orders_api.find_active_key',
  (p) => sql`SELECT k.id, k.organisation_id AS "organisationId", k.mode, k.permission, k.bank_account_id AS "bankAccountId",
     ${apiKeyAccountIds('k')} AS "accountIds",
     ARRAY(SELECT b.id FROM bank_accounts b
           WHERE b.organisation_id = k.organisation_id AND b.mode = k.mode AND b.dedicated AND (k.bank_account_id IS NULL OR b.id = k.bank_account_id)
           ORDER BY b.created_at, b.id) AS "dedicatedAccountIds"
   FROM api_keys k WHERE k.key_hash = ${p.keyHash} AND k.revoked_at IS NULL`,
);

/**
 * The key with this hash unless revoked, with the bank accounts in its scope. Read on nearly every
 * /v1 request (`ApiKeys` says which are spared), so plain SQL, one statement.
 */
export async function findActiveKeyByHash(db: Sql, keyHash: string): Promise<ActiveKey | null> {
  const [row] = await db.rows(findActiveKey, { keyHash });
  return row ?? null;
}

/** Sets the key's `last_used_at`, unless another process set it less than a minute before. */
export async function markKeyUsed(db: Db, keyId: string, at: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE api_keys SET last_used_at = ${at}
    WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at <= ${at}::timestamptz - interval '1 minute')`;
}

/** The organisation's keys of one mode, newest first, revoked ones included. */
export async function listApiKeys(db: Db, scope: { organisationId: string; mode: string }): Promise<ApiKeyRow[]> {
  return db.apiKey.findMany({ where: { organisationId: scope.organisationId, mode: scope.mode }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

/** Revokes a key of the organisation and mode; revoking twice keeps the first time. False when there is no such key. */
export async function revokeKey(db: Db, scope: { organisationId: string; mode: string }, keyId: string, now: Date): Promise<boolean> {
  await db.apiKey.updateMany({ where: { id: keyId, organisationId: scope.organisationId, mode: scope.mode, revokedAt: null }, data: { revokedAt: now } });
  return (await db.apiKey.count({ where: { id: keyId, organisationId: scope.organisationId, mode: scope.mode } })) === 1;
}
