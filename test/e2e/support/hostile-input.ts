import fc from 'fast-check';
import { ErrorBody } from '@pmatch/contracts';

/** The hostile inputs the fuzzers (test/e2e/fuzz*.test.ts) send, and what every answer must be. */

/** Cases per property; CI runs the default. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 1000);

/** Never a 5xx, and every error in the DESIGN error body. */
export function expectWellFormed(res: { status: number; body: unknown }, context: unknown): void {
  if (res.status >= 500) throw new Error(`5xx for ${JSON.stringify(context).slice(0, 500)}: ${JSON.stringify(res.body)}`);
  if (res.status >= 400) ErrorBody.parse(res.body);
}

/** Strings and numbers that break naive code: control characters, lone surrogates, injections, extremes. */
export const weirdString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constantFrom('', ' ', '\u0000', '\u202e', '\ud800', '𠮷野家', 'ﾔﾏﾀﾞ ﾀﾛｳ', '<script>alert(1)</script>', "'; DROP TABLE orders; --", '%00', '../../etc/passwd', 'x'.repeat(300)),
);
export const weirdNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1, 9_999_999_999, 10_000_000_000, Number.MAX_SAFE_INTEGER, 1e308, -0, 0.5),
);
/** JSON values of every shape, including deep nesting and hostile strings, keyed often by our field names. */
export const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, weirdString, weirdNumber, fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(weirdString, fc.constantFrom('amount', 'payer_name', 'external_id', 'item_name', 'metadata', 'order_id', 'paid_at', 'counterparty', 'ordered_at', 'expires_at', 'matching_rules', 'url', 'enabled_events', 'enabled', 'bank_account_id', 'bank_reference', 'direction', '__proto__', 'constructor')), tie('value'), { maxKeys: 8 }),
})).value;

