import { statement, type Sql } from '@pmatch/db';

/** What a request's authentication needs of its API key. */
export type ActiveKey = {
  id: string;
  organisationId: string;
  mode: string;
  permission: string;
  bankAccountId: string | null;
};

const findActiveKey = statement(
  'orders_api.find_active_key',
  `SELECT id, organisation_id AS "organisationId", mode, permission, bank_account_id AS "bankAccountId"
   FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
);

/**
 * The key with this hash unless revoked. Read on every /v1 request, so plain SQL; not cached, so
 * a revoked key is refused from the next request on.
 */
export async function findActiveKeyByHash(sql: Sql, keyHash: string): Promise<ActiveKey | null> {
  const [row] = await sql.rows<ActiveKey>(findActiveKey, [keyHash]);
  return row ?? null;
}
