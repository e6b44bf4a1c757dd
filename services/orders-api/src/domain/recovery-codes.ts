import { createHash, randomInt } from 'node:crypto';

/** How many recovery codes a person gets at once; each works once. */
export const RECOVERY_CODE_COUNT = 10;

/** Lower-case base32 without 0, 1, 8 and 9: nothing to mistake when typed from paper. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
/** 16 characters of 32: 80 random bits, beyond guessing even offline from its SHA-256. */
const LENGTH = 16;

/** A new set of recovery codes as a person writes them down: `abcd-efgh-ijkl-mnop`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const text = Array.from({ length: LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
    return text.match(/.{4}/g)!.join('-');
  });
}

/** A typed recovery code as stored (lower case, no spaces or hyphens), or undefined when it cannot be one. */
export function normalRecoveryCode(typed: string): string | undefined {
  const text = typed.toLowerCase().replace(/[\s-]/g, '');
  return text.length === LENGTH && [...text].every((c) => ALPHABET.includes(c)) ? text : undefined;
}

/** What is stored of a recovery code: the SHA-256 of its normal form. */
export function recoveryCodeHash(normal: string): string {
  return createHash('sha256').update(normal).digest('hex');
}
