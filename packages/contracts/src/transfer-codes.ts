import { randomInt } from 'node:crypto';

/**
 * Transfer codes (振込依頼人番号): the 7-digit number a buyer writes before their name, so the
 * deposit names its order (docs/decisions/0094-transfer-codes.md). Six digits, the first not 0,
 * then a Damm check digit: a code mistyped by one digit, or with two neighbours swapped, is no
 * code at all, so it can never name another order. A code is unique among an account's open orders
 * and free again 180 days after its order closed (the database's `first_free_transfer_code`).
 */
export const TRANSFER_CODE_PATTERN = /^[1-9][0-9]{6}$/;

/** Damm's quasigroup of order 10 (H. M. Damm, 2004): row = interim digit, column = next digit. */
const DAMM = [
  [0, 3, 1, 7, 5, 9, 8, 6, 4, 2],
  [7, 0, 9, 2, 1, 5, 4, 8, 6, 3],
  [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
  [1, 7, 5, 0, 9, 8, 3, 4, 2, 6],
  [6, 1, 2, 3, 0, 4, 5, 9, 7, 8],
  [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
  [5, 8, 6, 9, 7, 2, 0, 1, 3, 4],
  [8, 9, 4, 5, 3, 6, 2, 0, 1, 7],
  [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
  [2, 5, 8, 1, 4, 3, 6, 7, 9, 0],
] as const;

/** The Damm interim digit of a string of digits: 0 exactly when its last digit checks the rest. */
export function dammInterim(digits: string): number {
  let interim = 0;
  for (const ch of digits) interim = DAMM[interim]![ch.charCodeAt(0) - 48]!;
  return interim;
}

/** A new random transfer code. */
export function newTransferCode(): string {
  const payload = String(randomInt(100_000, 1_000_000));
  return `${payload}${dammInterim(payload)}`;
}

export function isTransferCode(text: string): boolean {
  return TRANSFER_CODE_PATTERN.test(text) && dammInterim(text) === 0;
}

/** Seven digits at the start of a name, before anything that is not a digit (a space, a kana). */
const LEADING_CODE = /^\s*([0-9０-９]{7})(?![0-9０-９])/u;

/**
 * The transfer code a deposit carries: the bank's 振込依頼人コード (up to 10 digits, zero-padded)
 * when it holds one, else seven digits the payer wrote before their name. Undefined when neither
 * is a valid code (a member number, a sender code, a mistyped code).
 */
export function transferCodeOf(depositorName: string, remitterCode?: string | null): string | undefined {
  if (remitterCode !== undefined && remitterCode !== null) {
    const code = remitterCode.replace(/^0+/, '');
    if (isTransferCode(code)) return code;
  }
  const written = LEADING_CODE.exec(depositorName)?.[1]?.normalize('NFKC');
  return written !== undefined && isTransferCode(written) ? written : undefined;
}
