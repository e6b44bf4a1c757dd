import { paymentLinkStatus } from '@pmatch/db';
import { judgeBuyerName, paymentLinkExpiry } from '../src/domain/payment-links';

/** The rules of a payment link's page, without I/O (its markup: test/e2e/buyer-page-markup.test.ts). */

const NOW = new Date('2026-11-28T03:00:00.000Z');

describe("a buyer's name", () => {
  test.each([
    ['やまだ たろう', 'ﾔﾏﾀﾞ ﾀﾛｳ'],
    ['ヤマダ　タロウ', 'ﾔﾏﾀﾞ ﾀﾛｳ'],
    ['  ｷｮｳｺ  ', 'ｷﾖｳｺ'],
    ['株式会社ヤマダ', 'ｶ)ﾔﾏﾀﾞ'],
    ['Taro Yamada', 'TARO YAMADA'],
  ])('when %s is typed, then it is printable as %s', (typed, printed) => {
    expect(judgeBuyerName(typed)).toEqual({ kind: 'printable', typed: typed.trim(), bankForm: printed });
  });

  test.each([
    ['', { kind: 'empty' }],
    ['   ', { kind: 'empty' }],
    [undefined, { kind: 'empty' }],
    [['ヤマダ'], { kind: 'empty' }],
    ['ア'.repeat(101), { kind: 'too_long' }],
    ['山田 タロウ', { kind: 'unprintable', typed: '山田 タロウ', characters: ['山', '田'] }],
    ['ヤマダ・タロウ', { kind: 'unprintable', typed: 'ヤマダ・タロウ', characters: ['・'] }],
    ['ヤマダ\u0000', { kind: 'unprintable', typed: 'ヤマダ\u0000', characters: [] }],
  ])('when %j is typed, then it is refused as %j', (typed, judged) => {
    expect(judgeBuyerName(typed)).toEqual(judged);
  });
});

describe('a payment link', () => {
  const row = { deactivatedAt: null, useLimit: 2, useCount: 0, expiresAt: new Date(NOW.getTime() + 1000) };

  test('when it is deactivated, used up or past its end, then its status says which, a deactivation first', () => {
    expect(paymentLinkStatus(row, NOW)).toBe('active');
    expect(paymentLinkStatus({ ...row, useCount: 2 }, NOW)).toBe('used_up');
    expect(paymentLinkStatus(row, new Date(NOW.getTime() + 1000))).toBe('expired');
    expect(paymentLinkStatus({ ...row, useCount: 2, deactivatedAt: NOW }, new Date(NOW.getTime() + 5000))).toBe('deactivated');
  });

  test('when its end is not in the future, then 400 parameter_invalid naming expires_at', () => {
    expect(() => paymentLinkExpiry(NOW.toISOString(), NOW)).toThrow(expect.objectContaining({ code: 'parameter_invalid', param: 'expires_at' }));
    expect(paymentLinkExpiry(undefined, NOW)).toBeNull();
  });
});
