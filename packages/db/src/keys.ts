/**
 * The bank accounts in the scope of the API key aliased `key`, as an SQL array expression, oldest
 * first: its one account, or every account of its organisation and mode. Accounts are never
 * removed and a key's scope never changes, so the list only grows as accounts are added.
 */
export function apiKeyAccountIds(key: string): string {
  return `ARRAY(SELECT b.id FROM bank_accounts b
           WHERE b.organisation_id = ${key}.organisation_id AND b.mode = ${key}.mode AND (${key}.bank_account_id IS NULL OR b.id = ${key}.bank_account_id)
           ORDER BY b.created_at, b.id)`;
}
