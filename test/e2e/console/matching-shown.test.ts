import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Page } from 'playwright-core';
import { REPO_ROOT } from '@pmatch/testkit';
import { seriousViolations, useConsole, type Console } from './support';

/**
 * What matching decided, as a seller reads it in the console: each case driven through the built
 * services, its page checked for what it must say (and by axe-core), then photographed. With
 * UPDATE_CONSOLE_SCREENSHOTS=1 the pictures replace those in docs/console/ (shown by
 * docs/console.md and docs/guide.md); otherwise they go to a temporary folder.
 */
const SHOTS = process.env.UPDATE_CONSOLE_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'console') : join(tmpdir(), 'pmatch-console-shots');

const DAY = 24 * 3_600_000;
let world: Console;
useConsole(async (started) => {
  world = started;
  mkdirSync(SHOTS, { recursive: true });
  const rules = await world.merchant.request('PATCH', '/v1/settings', {
    matching_rules: ['kana_width', 'learned_payer', 'transfer_code', 'dedicated_account'],
  });
  if (rules.status !== 200) throw new Error(`rules not set: ${rules.status}`);
});

/** The page's main text, once it has loaded with 200. */
async function open(page: Page, path: string): Promise<string> {
  const response = await page.goto(`${world.baseUrl}${path}`);
  expect([path, response?.status()]).toEqual([path, 200]);
  return (await page.locator('main').innerText()).replace(/\s+/g, ' ');
}

async function photograph(page: Page, name: string): Promise<void> {
  expect([name, await seriousViolations(page)]).toEqual([name, []]);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

test("when an operator confirms the mother's deposit remembering her as the payer, then next month's deposit under her name shows as confirmed by the remembered payer", async () => {
  const first = await world.merchant.createOrder({ amount: 3300, payer_name: 'ヤマダ タロウ', external_id: 'EC-2001', item_name: '学習ドリル 1月号' });
  const mothers = await world.merchant.deposit(3300, 'ﾔﾏﾀﾞ ﾊﾅｺ');
  expect(mothers).toMatchObject({ status: 'held', decision: { reason: 'no_name_fits' } });
  const page = await world.logIn('operator');
  await open(page, `/dashboard/deposits/${mothers.id}`);
  await page.getByLabel('この振込名義を「ヤマダ タロウ」の支払者として覚える').check();
  await page.getByRole('button', { name: 'この注文で確定（EC-2001）' }).click();
  await page.waitForURL(/done=confirmed/);
  expect((await world.merchant.order(first.id)).status).toBe('paid');

  // A month later: a deposit of the same name, amount and day would be held as a possible duplicate.
  world.system.advanceClock(30 * DAY);
  await world.merchant.createOrder({ amount: 3300, payer_name: 'ヤマダ タロウ', external_id: 'EC-2002', item_name: '学習ドリル 2月号' });
  const nextMonth = await world.merchant.deposit(3300, 'ﾔﾏﾀﾞ ﾊﾅｺ');
  // The operator's session ended with the month; a viewer reads the page.
  const viewer = await world.logIn('viewer');
  const text = await open(viewer, `/dashboard/deposits/${nextMonth.id}`);

  expect(nextMonth).toMatchObject({ status: 'confirmed', decision: { reason: 'rule:learned_payer' } });
  expect(text).toContain('消込済み');
  expect(text).toContain('判定理由: 覚えた支払者として一致');
  expect(text).toMatch(/EC-2002 ヤマダ タロウ .*覚えた支払者として一致 使ったルール: 覚えた支払者/);
  await photograph(viewer, 'deposit-learned-payer');
});

test('when an order taken in kanji is paid with its transfer code before the name, then its deposit shows as confirmed by the transfer code for the kanji payer', async () => {
  const order = await world.merchant.createOrder({ amount: 8800, payer_name: '山田 太郎', external_id: 'EC-2003', item_name: '日本茶セット' });
  const deposit = await world.merchant.deposit(8800, `${order.transfer_code} ﾔﾏﾀﾞ ﾀﾛｳ`);
  expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id, decision: { reason: 'rule:transfer_code' } });
  const page = await world.logIn('viewer');

  const text = await open(page, `/dashboard/deposits/${deposit.id}`);

  expect(text).toContain(`${order.transfer_code} ﾔﾏﾀﾞ ﾀﾛｳ`);
  expect(text).toContain('判定理由: 振込コードで一致');
  expect(text).toContain('消込先の注文 EC-2003');
  expect(await page.getByRole('link', { name: 'EC-2003', exact: true }).first().getAttribute('href')).toBe(`/dashboard/orders/${order.id}`);
  expect(text).toContain('EC-2003 山田 太郎');
  await photograph(page, 'deposit-transfer-code');
});

test('when a deposit is short of an open order of the name by a transfer fee, then its unmatched page shows that order as a near miss', async () => {
  await world.merchant.createOrder({ amount: 5000, payer_name: 'サトウ ハナコ', external_id: 'EC-2004', item_name: 'タオルセット' });
  const deposit = await world.merchant.deposit(4670, 'ｻﾄｳ ﾊﾅｺ');
  expect(deposit).toMatchObject({ status: 'unmatched', decision: { reason: 'no_order_with_amount' } });
  const page = await world.logIn('operator');

  const text = await open(page, `/dashboard/deposits/${deposit.id}`);

  expect(text).toContain('未消込');
  expect(text).toContain('金額が少し違う注文（自動では確定しません）');
  expect(text).toMatch(/EC-2004 サトウ ハナコ ¥330 不足 振込手数料が差し引かれた/);
  await photograph(page, 'deposit-near-miss');
});

test('when the same transfer arrives twice under another bank reference, then the second is held as a possible duplicate beside the first', async () => {
  const first = await world.merchant.createOrder({ amount: 6200, payer_name: 'ｽｽﾞｷ ｲﾁﾛｳ', external_id: 'EC-2005', item_name: '文具セット' });
  const paid = await world.merchant.deposit(6200, 'ｽｽﾞｷ ｲﾁﾛｳ');
  expect(paid).toMatchObject({ status: 'confirmed', order_id: first.id });
  await world.merchant.createOrder({ amount: 6200, payer_name: 'ｽｽﾞｷ ｲﾁﾛｳ', external_id: 'EC-2006', item_name: '文具セット' });
  const twin = await world.merchant.deposit(6200, 'ｽｽﾞｷ ｲﾁﾛｳ');
  expect(twin).toMatchObject({ status: 'held', decision: { reason: 'possible_duplicate', duplicate_of: paid.id } });
  const page = await world.logIn('operator');

  const text = await open(page, `/dashboard/deposits/${twin.id}`);

  expect(text).toContain('判定理由: 同じ口座・金額・名義・日の入金が先にあります');
  expect(text).toContain('先にあった同じ入金 状態 消込済み 入金を開く 金額 ¥6,200 振込名義 ｽｽﾞｷ ｲﾁﾛｳ');
  const earlier = page.getByRole('region', { name: '先にあった同じ入金' });
  expect(await earlier.getByRole('link', { name: '入金を開く' }).getAttribute('href')).toBe(`/dashboard/deposits/${paid.id}`);
  const [, earlierReference, ownReference] = /銀行の参照番号 (\S+)（この入金は (\S+)）/.exec(text) ?? [];
  expect(earlierReference).toBeDefined();
  expect(ownReference).not.toBe(earlierReference);
  expect(await earlier.getByRole('link', { name: '注文を開く' }).getAttribute('href')).toBe(`/dashboard/orders/${first.id}`);
  await photograph(page, 'deposit-possible-duplicate');
});

test("when an order is given a dedicated account, then its payment page and the console's order page show the account, and a deposit of another amount into it is held saying so", async () => {
  const order = await world.merchant.createOrder({
    amount: 12800,
    payer_name: 'ﾀﾅｶ ｼﾞﾛｳ',
    external_id: 'EC-2007',
    item_name: 'お米 10kg',
    dedicated_account: true,
  });
  const to = order.transfer_to;
  expect(order).toMatchObject({ dedicated_account: true, transfer_to: { account_number: expect.stringMatching(/^[0-9]{7}$/) } });
  const buyer = await world.newPage();
  await buyer.setViewportSize({ width: 390, height: 1000 });

  await buyer.goto(order.payment_url);
  const paymentText = (await buyer.locator('body').innerText()).replace(/\s+/g, ' ');

  expect(paymentText).toContain(`口座番号 ${to.account_number}`);
  expect(paymentText).toContain(`口座名義 ${to.holder_name}`);
  expect(paymentText).toContain('この口座はこのご注文専用のお振込み先です');
  await photograph(buyer, 'payment-page-dedicated');

  const page = await world.logIn('operator');
  const orderText = await open(page, `/dashboard/orders/${order.id}`);
  expect(orderText).toContain('専用の振込先口座');
  expect(orderText).toContain(`口座番号 ${to.account_number} 口座名義 ${to.holder_name} 割り当て この注文専用（期限型）`);
  expect(orderText).toContain(`支店 ${to.branch_name === null ? to.branch_code : `${to.branch_name} (${to.branch_code})`}`);
  await photograph(page, 'order-dedicated');
  const inEnglish = await open(page, `/dashboard/orders/${order.id}?lang=en`);
  expect(inEnglish).toContain(`Dedicated transfer account`);
  expect(inEnglish).toContain(`Account number ${to.account_number} Account holder ${to.holder_name} Given to This order alone (per order)`);

  const short = await world.merchant.deposit(12470, 'ﾀﾅｶ ｼﾞﾛｳ', { bank_account_id: order.bank_account_id });
  const heldText = await open(page, `/dashboard/deposits/${short.id}?lang=ja`);

  expect(short).toMatchObject({ status: 'held', candidate_order_ids: [], decision: { reason: 'dedicated_account_amount_differs' } });
  expect(heldText).toContain('判定理由: 専用口座の注文は受付中ですが、金額が違います');
  expect(heldText).toContain('この専用口座の注文: EC-2007 受付中');
  expect((await world.merchant.order(order.id)).status).toBe('open');
});
