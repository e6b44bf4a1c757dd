import { AppError, newId, type AccountType } from '@pmatch/contracts';
import type { BankAccountRow, Tx } from './client';

/** At most this many accounts in one addition (`ops bank-account add --dedicated`, the console's dedicated accounts page). */
export const LIVE_BANK_ACCOUNTS_ADDED_MAX = 10_000;

/**
 * The transaction-local setting that names the organisation whose accounts are being added:
 * orders-api may add live bank accounts only when they are dedicated ones of this organisation
 * (the triggers orders_api_bank_account_check and orders_api_dedicated_account_check).
 */
const ADDING_ACCOUNTS_OF = 'pmatch.adding_accounts_of';

/** Live accounts of one bank, branch, type and holder, one for each number. */
export interface NewLiveBankAccounts {
  organisationId: string;
  bankCode: string;
  branchCode: string;
  accountType: AccountType;
  holderName: string;
  bankName: string | null;
  branchName: string | null;
  /** Distinct 7-digit numbers. */
  accountNumbers: readonly string[];
  /** Dedicated transfer accounts (振込専用口座): each also gets its free row in dedicated_accounts. */
  dedicated: boolean;
}

/** The accounts added (by number), or the numbers the organisation already has as live accounts of that bank, branch and type. */
export type LiveBankAccountsAdded = { outcome: 'added'; accounts: BankAccountRow[] } | { outcome: 'already_registered'; accountNumbers: string[] };

/**
 * Adds live bank accounts to an organisation, all or none, in the caller's transaction (the
 * operator's `bank-account add`, an admin on the console). A number the organisation already has
 * at that bank, branch and type adds nothing: the answer names every such number. Additions to one
 * organisation are serialised, so two at once cannot both add a number.
 */
export async function insertLiveBankAccounts(tx: Tx, accounts: NewLiveBankAccounts): Promise<LiveBankAccountsAdded> {
  const numbers = [...accounts.accountNumbers];
  if (numbers.length === 0 || numbers.length > LIVE_BANK_ACCOUNTS_ADDED_MAX) {
    throw new AppError('parameter_invalid', `from 1 to ${LIVE_BANK_ACCOUNTS_ADDED_MAX} account numbers at once`, { param: 'account_number' });
  }
  if (new Set(numbers).size !== numbers.length) throw new AppError('parameter_invalid', 'the account numbers repeat a number', { param: 'account_number' });
  const bad = numbers.find((number) => !/^[0-9]{7}$/.test(number));
  if (bad !== undefined) throw new AppError('parameter_invalid', `${bad} is not a 7-digit account number`, { param: 'account_number' });
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended('bank_accounts:' || ${accounts.organisationId}, 0)),
                              set_config(${ADDING_ACCOUNTS_OF}, ${accounts.organisationId}, true)`;
  const identity = { bankCode: accounts.bankCode, branchCode: accounts.branchCode, accountType: accounts.accountType };
  // The same account twice would make every order without bank_account_id ambiguous, and a number given twice pays two orders.
  const existing = await tx.bankAccount.findMany({
    where: { organisationId: accounts.organisationId, mode: 'live', ...identity, accountNumber: { in: numbers } },
    select: { accountNumber: true },
    orderBy: { accountNumber: 'asc' },
  });
  if (existing.length > 0) return { outcome: 'already_registered', accountNumbers: existing.map((row) => row.accountNumber) };
  const rows = numbers.map((accountNumber) => ({
    id: newId('bankAccount'),
    organisationId: accounts.organisationId,
    mode: 'live',
    ...identity,
    accountNumber,
    holderName: accounts.holderName,
    bankName: accounts.bankName,
    branchName: accounts.branchName,
    dedicated: accounts.dedicated,
  }));
  await tx.bankAccount.createMany({ data: rows });
  if (accounts.dedicated) {
    await tx.dedicatedAccount.createMany({ data: rows.map((row) => ({ bankAccountId: row.id, organisationId: row.organisationId, mode: 'live' })) });
  }
  const added = await tx.bankAccount.findMany({ where: { id: { in: rows.map((row) => row.id) } }, orderBy: { accountNumber: 'asc' } });
  return { outcome: 'added', accounts: added };
}

/** `count` account numbers from `first` on, each one more than the one before (7 digits, none above 9999999). */
export function consecutiveAccountNumbers(first: string, count: number): string[] {
  const start = Number(first);
  if (start + count - 1 > 9_999_999) {
    throw new AppError('parameter_invalid', `${count} numbers from ${first} would pass 9999999`, { param: 'count' });
  }
  return Array.from({ length: count }, (_, i) => String(start + i).padStart(7, '0'));
}
