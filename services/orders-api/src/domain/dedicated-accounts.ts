import { ACCOUNT_TYPES, type AccountType } from '@pmatch/contracts';
import { LIVE_BANK_ACCOUNTS_ADDED_MAX } from '@pmatch/db';

/**
 * Dedicated transfer accounts (振込専用口座) an admin adds on the console: the form as typed, and
 * what it asks for once every field is right (docs/decisions/0173-console-adds-dedicated-accounts.md).
 */

/** Where a dedicated account stands: free, given to an open order, given to a buyer for good, or resting after its order closed. */
export type DedicatedAccountState = 'free' | 'order' | 'buyer' | 'resting';

/** The most numbers one list on the form may hold: a form's body is at most 64 KB. Consecutive numbers go up to the operator's maximum. */
export const DEDICATED_NUMBERS_LISTED_MAX = 4_000;

/** The form as typed, every field a string (kept to show again when something is wrong). */
export interface DedicatedAccountsForm {
  bank_code: string;
  bank_name: string;
  branch_code: string;
  branch_name: string;
  account_type: string;
  holder_name: string;
  first_number: string;
  count: string;
  numbers: string;
}

export const DEDICATED_ACCOUNTS_FORM_FIELDS = [
  'bank_code',
  'bank_name',
  'branch_code',
  'branch_name',
  'account_type',
  'holder_name',
  'first_number',
  'count',
  'numbers',
] as const satisfies readonly (keyof DedicatedAccountsForm)[];

/** Why a field is not right; the console words each. */
export type DedicatedAccountsProblem =
  | 'bank_code'
  | 'bank_name'
  | 'branch_code'
  | 'branch_name'
  | 'account_type'
  | 'holder_name'
  | 'numbers_missing'
  | 'numbers_both'
  | 'first_number'
  | 'count'
  | 'past_last_number'
  | 'numbers_line'
  | 'numbers_too_many'
  | 'numbers_repeat';

/** What a right form asks for: accounts of one bank, branch, type and holder, one for each number. */
export interface DedicatedAccountsAddition {
  bankCode: string;
  bankName: string;
  branchCode: string;
  branchName: string;
  accountType: AccountType;
  holderName: string;
  accountNumbers: string[];
}

/** What a holder name may hold, as banks print it (Zengin): half-width kana, A–Z, 0–9, space and ( ) . - / , */
const ZENGIN_NAME = /^[\uFF66-\uFF9F A-Z0-9().\-/,]+$/u;

/** The form's problems (each with the line of the list it is on, when it is one), or what it asks for. */
export function readDedicatedAccountsForm(
  form: DedicatedAccountsForm,
): { ok: true; addition: DedicatedAccountsAddition } | { ok: false; problems: { problem: DedicatedAccountsProblem; line?: number }[] } {
  const problems: { problem: DedicatedAccountsProblem; line?: number }[] = [];
  const text = (value: string, problem: DedicatedAccountsProblem) => {
    const trimmed = value.trim();
    if (trimmed.length < 1 || trimmed.length > 100) problems.push({ problem });
    return trimmed;
  };
  const bankCode = form.bank_code.trim();
  if (!/^[0-9]{4}$/.test(bankCode)) problems.push({ problem: 'bank_code' });
  const bankName = text(form.bank_name, 'bank_name');
  const branchCode = form.branch_code.trim();
  if (!/^[0-9]{3}$/.test(branchCode)) problems.push({ problem: 'branch_code' });
  const branchName = text(form.branch_name, 'branch_name');
  const accountType = ACCOUNT_TYPES.find((type) => type === form.account_type);
  if (accountType === undefined) problems.push({ problem: 'account_type' });
  const holderName = form.holder_name.trim();
  if (holderName.length > 100 || !ZENGIN_NAME.test(holderName)) problems.push({ problem: 'holder_name' });
  const accountNumbers = numbersOf(form, problems);
  if (problems.length > 0 || accountType === undefined) return { ok: false, problems };
  return { ok: true, addition: { bankCode, bankName, branchCode, branchName, accountType, holderName, accountNumbers } };
}

function numbersOf(form: DedicatedAccountsForm, problems: { problem: DedicatedAccountsProblem; line?: number }[]): string[] {
  const lines = form.numbers.split(/\r?\n/).map((line) => line.trim());
  const listed = lines.some((line) => line !== '');
  const first = form.first_number.trim();
  const count = form.count.trim();
  if (listed && (first !== '' || count !== '')) {
    problems.push({ problem: 'numbers_both' });
    return [];
  }
  if (listed) {
    const bad = lines.findIndex((line) => line !== '' && !/^[0-9]{7}$/.test(line));
    if (bad >= 0) {
      problems.push({ problem: 'numbers_line', line: bad + 1 });
      return [];
    }
    const numbers = lines.filter((line) => line !== '');
    if (numbers.length > DEDICATED_NUMBERS_LISTED_MAX) problems.push({ problem: 'numbers_too_many' });
    else if (new Set(numbers).size !== numbers.length) problems.push({ problem: 'numbers_repeat' });
    return numbers;
  }
  if (first === '') {
    problems.push({ problem: 'numbers_missing' });
    return [];
  }
  if (!/^[0-9]{7}$/.test(first)) problems.push({ problem: 'first_number' });
  const n = count === '' ? 1 : /^[0-9]{1,6}$/.test(count) ? Number(count) : 0;
  if (n < 1 || n > LIVE_BANK_ACCOUNTS_ADDED_MAX) problems.push({ problem: 'count' });
  if (problems.some((p) => p.problem === 'first_number' || p.problem === 'count')) return [];
  if (Number(first) + n - 1 > 9_999_999) {
    problems.push({ problem: 'past_last_number' });
    return [];
  }
  return Array.from({ length: n }, (_, i) => String(Number(first) + i).padStart(7, '0'));
}
