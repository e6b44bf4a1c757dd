import { apiKeyAccountIds, sql, statement, type Sql } from '@pmatch/db';

/** What a request's authentication needs of its API key. */
export type ActiveKey = {
  id: string;
  organisationId: string;
  mode: string;
  permission: string;
  bankAccountId: string | null;
  /** The bank accounts in the key's scope, oldest first (see `AuthContext.accountIds`). */
  accountIds: string[];
};

const findActiveKey = statement<{ keyHash: string }, ActiveKey>(
  'orders_api.find_active_key',
  (p) => sql`SELECT k.id, k.organisation_id AS "organisationId", k.mode, k.permission, k.bank_account_id AS "bankAccountId",
     ${apiKeyAccountIds('k')} AS "accountIds"
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
