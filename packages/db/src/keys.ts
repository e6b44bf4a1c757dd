import { createHash, randomInt } from 'node:crypto';
import { API_KEY_PREFIX, AppError, newId, randomBase62, type ApiKeyPermission, type Mode } from '@pmatch/contracts';
import type { ApiKeyRow, Tx } from './client';

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

/** What a new API key is: its scope, name and permission. */
export interface NewApiKey {
  organisationId: string;
  mode: Mode;
  name: string;
  permission: ApiKeyPermission;
  /** Live keys only: limits the key to this one account of the organisation. */
  bankAccountId: string | null;
}

/**
 * Writes a new API key (its SHA-256 and a hint, never its text) and resolves with the row and the
 * text, which exists nowhere else and is shown once. A test key needs the organisation's test
 * account, made with its first test key. Run it in a DB transaction with the organisation read.
 */
export async function insertApiKey(tx: Tx, organisation: { id: string; name: string }, key: NewApiKey): Promise<{ row: ApiKeyRow; keyText: string }> {
  if (key.bankAccountId !== null && key.mode !== 'live') {
    throw new AppError('parameter_invalid', 'Only a live key can be limited to one bank account: a test key uses the test bank account.', {
      param: 'bank_account_id',
    });
  }
  const keyText = API_KEY_PREFIX[key.mode] + randomBase62(32);
  if (key.mode === 'test') await ensureTestBankAccount(tx, organisation);
  const row = await tx.apiKey.create({
    data: {
      id: newId('apiKey'),
      organisationId: organisation.id,
      mode: key.mode,
      name: key.name,
      permission: key.permission,
      bankAccountId: key.bankAccountId,
      keyHash: createHash('sha256').update(keyText).digest('hex'),
      keyHint: `${API_KEY_PREFIX[key.mode]}...${keyText.slice(-4)}`,
    },
  });
  return { row, keyText };
}

const TEST_BANK_ACCOUNT = {
  bankCode: '9999',
  bankName: 'テスト銀行',
  branchCode: '001',
  branchName: 'テスト支店',
} as const;

/**
 * The organisation's one test account, and with it its pool of dedicated ones. ON CONFLICT DO NOTHING (skipDuplicates) against the partial
 * unique index bank_accounts_one_test_account_idx makes two racing first keys share one account
 * instead of failing: a caught unique violation would abort the whole transaction in PostgreSQL.
 */
async function ensureTestBankAccount(tx: Tx, organisation: { id: string; name: string }): Promise<void> {
  const first = randomInt(0, 10_000_000 - TEST_DEDICATED_POOL - 1);
  // The pool a millisecond after the plain account, so that lists (oldest first) show the plain one first.
  const at = Date.now();
  const account = (offset: number, dedicated: boolean) => ({
    id: newId('bankAccount'),
    organisationId: organisation.id,
    mode: 'test',
    ...TEST_BANK_ACCOUNT,
    accountNumber: String(first + offset).padStart(7, '0'),
    holderName: organisation.name,
    dedicated,
    createdAt: new Date(dedicated ? at + 1 : at),
  });
  const { count } = await tx.bankAccount.createMany({ data: [account(0, false)], skipDuplicates: true });
  // The key that made the test account makes its pool too; a racing first key made neither.
  if (count === 0) return;
  const pool = Array.from({ length: TEST_DEDICATED_POOL }, (_, i) => account(i + 1, true));
  await tx.bankAccount.createMany({ data: pool });
  await tx.dedicatedAccount.createMany({ data: pool.map((row) => ({ bankAccountId: row.id, organisationId: organisation.id, mode: 'test' })) });
}

/** Dedicated transfer accounts every organisation has in test mode, numbered on from its test account. */
export const TEST_DEDICATED_POOL = 5;
