import { statement, type Sql } from '@pmatch/db';

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

const findActiveKey = statement(
  'orders_api.find_active_key',
  `SELECT k.id, k.organisation_id AS "organisationId", k.mode, k.permission, k.bank_account_id AS "bankAccountId",
     ARRAY(SELECT b.id FROM bank_accounts b
           WHERE b.organisation_id = k.organisation_id AND b.mode = k.mode AND (k.bank_account_id IS NULL OR b.id = k.bank_account_id)
           ORDER BY b.created_at, b.id) AS "accountIds"
   FROM api_keys k WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
);

/**
 * The key with this hash unless revoked, with the bank accounts in its scope. Read on every /v1
 * request, so plain SQL, one statement; not cached, so a revoked key is refused from the next
 * request on.
 */
export async function findActiveKeyByHash(sql: Sql, keyHash: string): Promise<ActiveKey | null> {
  const [row] = await sql.rows<ActiveKey>(findActiveKey, [keyHash]);
  return row ?? null;
}
