import { waitFor } from '@pmatch/testkit';
import { type Console, useConsole, webhookEndpoint } from './support';

/**
 * The deposit and order pages as they stand now: a held or unmatched deposit explained under the
 * rules and orders of the moment it is shown, a reversed payment's deposit offering the reopened
 * order, and an order listing the deposits that could pay it and the payments of it reversed.
 */

let world: Console;

useConsole(async (started) => {
  world = started;
});

afterEach(async () => {
  const reset = await world.merchant.request('PATCH', '/v1/settings', { matching_rules: [] });
  if (reset.status !== 200) throw new Error(`the matching rules were not reset: ${reset.status}`);
});

test('when a seller switches on the rule a held deposit waited for, then its page no longer says the rule is off: it says the rule would pay the order now, keeps the reason it was held for, and the deposit stays held until a person confirms it', async () => {
  const order = await world.merchant.createOrder({ amount: 8101, payer_name: 'ハバ ハナコ', external_id: 'width-now' });
  const deposit = await world.merchant.deposit(8101, 'ﾊﾊﾞ ﾊﾅｺ');
  expect(deposit.status).toBe('held');
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);
  const candidates = page.getByRole('table', { name: '候補の注文' });
  expect(await candidates.innerText()).toContain('有効でないルールなら一致');

  expect((await world.merchant.request('PATCH', '/v1/settings', { matching_rules: ['kana_width'] })).status).toBe(200);
  await page.reload();

  expect(await candidates.innerText()).not.toContain('有効でないルールなら一致');
  expect(await candidates.innerText()).toContain('カナ・全角半角の違いを無視して一致');
  const now = await page.locator('[data-explanation="now"]').innerText();
  expect(now).toContain('今のルールなら注文 width-now に消し込めます');
  expect(now).toContain('カナ・全角半角の違い');
  expect(await page.locator('[data-explanation="stored"]').innerText()).toContain('同じ金額の注文はありますが、名義が一致しません');
  expect((await world.merchant.transaction(deposit.id)).status).toBe('held');

  await page.getByRole('button', { name: 'この注文で確定（width-now）' }).click();
  expect(await page.getByRole('status').innerText()).toBe('入金を確定しました。');
  expect(await world.merchant.transaction(deposit.id)).toMatchObject({ status: 'confirmed', order_id: order.id });
});

test('when an order of its amount is registered after an unmatched deposit, then the deposit page says so in Japanese and English and lists that order, without a confirm the matcher would refuse', async () => {
  const deposit = await world.merchant.deposit(8201, 'アト チュウモン');
  expect(deposit.status).toBe('unmatched');
  world.system.advanceClock(60_000);
  const order = await world.merchant.createOrder({ amount: 8201, payer_name: 'アト チュウモン', external_id: 'ordered-later' });
  expect(Date.parse(order.ordered_at)).toBeGreaterThan(Date.parse(deposit.occurred_at));

  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);
  expect(await page.locator('[data-explanation="later-order"]').innerText()).toContain('この金額の注文が、この入金の後に登録されました。');
  const row = page.getByRole('table', { name: '候補の注文' }).getByRole('row').filter({ hasText: 'ordered-later' });
  expect(await row.innerText()).toContain('入金より後に注文された');
  expect(await row.getByRole('link', { name: 'ordered-later' }).getAttribute('href')).toBe(`/dashboard/orders/${order.id}`);
  expect(await row.getByRole('button').count()).toBe(0);
  expect((await world.merchant.transaction(deposit.id)).status).toBe('unmatched');

  const english = await world.logIn('viewer', 'en-US');
  await english.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);
  expect(await english.locator('[data-explanation="later-order"]').innerText()).toContain('An order of this amount was registered after this deposit.');
  expect(await english.locator('[data-explanation="now"]').innerText()).toContain('no order can take it');
});

test('when a payment is reversed, then the deposit page shows the reopened order with when and why, and confirming it there pays the order again while the order page keeps the reversed payment', async () => {
  const order = await world.merchant.createOrder({ amount: 8301, payer_name: 'モドシ タロウ', external_id: 'reopened' });
  const deposit = await world.merchant.deposit(8301, 'モドシ タロウ');
  expect(deposit.status).toBe('confirmed');
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/orders/${order.id}/reverse`);
  await page.getByLabel('取り消しの理由').fill('別の注文の入金と取り違えたため');
  await page.getByRole('button', { name: '取り消しを実行する' }).click();
  expect(await page.getByRole('status').innerText()).toContain('支払いを取り消しました');
  expect((await world.merchant.transaction(deposit.id)).status).toBe('unmatched');

  await page.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);
  const reversal = await page.getByRole('region', { name: '取り消された支払い' }).innerText();
  expect(reversal).toContain('この入金は注文 reopened に消し込まれていましたが、その支払いは取り消され');
  expect(reversal).toContain('別の注文の入金と取り違えたため');
  expect(reversal).toContain('受付中');

  await page.getByRole('button', { name: 'この注文で確定（reopened）' }).click();
  expect(await page.getByRole('status').innerText()).toBe('入金を確定しました。');
  expect(await world.merchant.transaction(deposit.id)).toMatchObject({ status: 'confirmed', order_id: order.id });

  await page.goto(`${world.baseUrl}/dashboard/orders/${order.id}`);
  const history = page.getByRole('table', { name: '取り消された支払い' });
  expect(await history.getByRole('link', { name: '入金を開く' }).getAttribute('href')).toBe(`/dashboard/deposits/${deposit.id}`);
  expect(await history.innerText()).toContain('別の注文の入金と取り違えたため');
  expect(await history.innerText()).toMatch(/operator-[a-z0-9]+@example\.com/);
  const payment = page.getByRole('region', { name: '支払い', exact: true });
  expect(await payment.getByRole('link', { name: '入金を開く' }).getAttribute('href')).toBe(`/dashboard/deposits/${deposit.id}`);
});

test('when a held deposit could pay an open order, then the order page lists it (and no deposit of another amount) and links to it', async () => {
  const first = await world.merchant.createOrder({ amount: 8401, payer_name: 'カノウ イチ', external_id: 'could-a' });
  await world.merchant.createOrder({ amount: 8401, payer_name: 'カノウ イチ', external_id: 'could-b' });
  const held = await world.merchant.deposit(8401, 'カノウ イチ');
  expect(held.status).toBe('held');
  const other = await world.merchant.deposit(8402, 'カノウ イチ');

  const page = await world.logIn('viewer');
  await page.goto(`${world.baseUrl}/dashboard/orders/${first.id}`);
  const table = page.getByRole('table', { name: 'この注文に消し込める入金' });
  expect(await table.getByRole('row').count()).toBe(2);
  expect(await table.innerText()).toContain('保留');
  expect(await table.innerHTML()).not.toContain(other.id);
  await table.getByRole('link', { name: 'カノウ イチ' }).click();
  await page.waitForURL(`**/dashboard/deposits/${held.id}`);
});

test('when an admin sends a test event from the page of an endpoint, then it appears in the delivery log of that endpoint with the answer of the receiver, is found by its id, and offers no resend', async () => {
  const endpoint = await webhookEndpoint(world, '/test-in-log');
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/webhooks/${endpoint.id}`);
  await page.getByRole('button', { name: 'テストイベントを送る' }).click();
  const testId = new URL(page.url()).searchParams.get('test_event')!;
  expect(testId).toMatch(/^evt_test_/);

  const log = page.getByRole('table', { name: '配信ログ' });
  const row = log.getByRole('row').filter({ hasText: testId });
  await waitFor(async () => ((await row.count()) === 1 ? true : (await page.reload(), undefined)), { what: 'the test event in the delivery log' });
  expect(world.receiver.requestsTo('/test-in-log').some((r) => r.headers['webhook-id'] === testId)).toBe(true);
  const shown = await row.innerText();
  expect(shown).toContain('webhook.test');
  expect(shown).toContain('200');
  expect(shown).toContain('テスト送信: 成功');
  expect(await row.getByRole('button').count()).toBe(0);

  await page.getByLabel('イベントID（evt_…）で検索').fill(testId);
  await page.getByRole('button', { name: '検索' }).click();
  expect(await log.getByRole('row').count()).toBe(2);
  expect(await log.innerText()).toContain(testId);
});
