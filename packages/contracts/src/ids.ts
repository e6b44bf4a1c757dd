import { customAlphabet } from 'nanoid';

/** Identifier prefixes. The part after the prefix is random base62. */
export const ID_PREFIX = {
  organisation: 'org',
  apiKey: 'key',
  bankAccount: 'ba',
  order: 'ord',
  transaction: 'txn',
  event: 'evt',
  webhookEndpoint: 'we',
  adapter: 'adp',
  statementImport: 'imp',
  delivery: 'dlv',
  user: 'usr',
  paymentLink: 'plink',
  payerAlias: 'pal',
} as const;
export type IdKind = keyof typeof ID_PREFIX;

export const ID_BODY_PATTERN = '[0-9A-Za-z]{12,40}';

export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${ID_PREFIX[kind]}_${ID_BODY_PATTERN}$`);
}

export const MODES = ['test', 'live'] as const;
export type Mode = (typeof MODES)[number];

/** The random part of a payment page URL: the only thing standing between a stranger and the page. */
export const PAYMENT_TOKEN_LENGTH = 32;
export const PAYMENT_TOKEN_PATTERN = new RegExp(`^[0-9A-Za-z]{${PAYMENT_TOKEN_LENGTH}}$`);

export const API_KEY_PREFIX: Record<Mode, string> = { test: 'svc_test_', live: 'svc_live_' };
export const API_KEY_PATTERN = /^svc_(test|live)_[0-9A-Za-z]{32}$/;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random base62 text from a CSPRNG, without modulo bias (nanoid masks and rejects). nanoid draws
 * from a pool of random bytes it refills in bulk: a tenth of the cost of a fresh buffer per call,
 * and ids are made on every hot path.
 */
const base62 = customAlphabet(BASE62, 24);

export function randomBase62(length: number): string {
  return base62(length);
}

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${randomBase62(24)}`;
}
