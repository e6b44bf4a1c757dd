import { paymentLinkStatus } from '@pmatch/db';
import { judgeBuyerName, paymentLinkExpiry } from '../src/domain/payment-links';
import { renderPaymentLinkPage } from '../src/domain/payment-link-page';
import { renderPaymentPage } from '../src/domain/payment-page';

/** The rules of a payment link's page and of the payer name on the payment page, without I/O. */

const NOW = new Date('2026-11-28T03:00:00.000Z');
const LINK = { mode: 'test', amount: 3000n, itemName: '新米 2kg', expiresAt: null };

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

  test('when the typed name and the item hold markup, then the page shows them as text', () => {
    const page = renderPaymentLinkPage({ ...LINK, itemName: '<script>x</script>' }, { kind: 'form', typed: '"><img src=x>' }, 'ja');

    expect(page).not.toContain('<script>x');
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(page).toContain('value="&quot;&gt;&lt;img src=x&gt;"');
  });
});

describe("the payment page's payer name", () => {
  const bankAccount = { bankCode: '9999', bankName: 'テスト銀行', branchCode: '001', branchName: '本店', accountNumber: '1234567', holderName: 'ﾃｽﾄ' };
  const order = (payerName: string) => ({ status: 'open', mode: 'test', amount: 5000n, itemName: 'x', payerName, expiresAt: new Date(NOW.getTime() + 60_000) });

  test('when the name is printable, then the page asks for its bank form and names the form given when it differs', () => {
    const page = renderPaymentPage({ order: order('やまだ たろう'), bankAccount, language: 'ja', now: NOW });

    expect(page).toContain('<p class="payer-name">ﾔﾏﾀﾞ ﾀﾛｳ</p>');
    expect(page).toContain('ご注文時のお名前「やまだ たろう」');
  });

  test('when no bank prints the name, then the page says the transfer will be held and what to do', () => {
    const page = renderPaymentPage({ order: order('山田太郎'), bankAccount, language: 'en', now: NOW });

    expect(page).toContain('characters banks cannot print');
    expect(page).toContain('tell the shop the date of your transfer');
  });
});
