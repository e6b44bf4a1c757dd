import type { Page } from 'playwright-core';
import { type Console, delivered, useConsole, webhookEndpoint } from './support';

/**
 * The console speaks to a shop owner: no identifiers, codes or developer words in what a page
 * shows, and after an action the focus is on its result, not at the top of the page.
 */

let world: Console;
useConsole((started) => {
  world = started;
});

/** What a shop owner must not read on a page: raw identifiers and the system's own words. */
const DEVELOPER_WORDS = [
  /\b(ord|txn|usr|evt|whe|key|pal)_[A-Za-z0-9]/,
  /user:/,
  /\bauto\b/,
  /\bdashboard\b/,
  /kana_width/,
  /matcher's own decision/,
  /not reversible by the API/,
  /\b[a-z]+\.[a-z_]+_[a-z_]+\b/, // an event type or audit action such as order.payment_reversed
  /\border\.(paid|created|canceled|expired)\b/,
  /\btransaction\.[a-z]+\b/,
];

async function developerWordsOn(page: Page): Promise<string[]> {
  // An event's JSON, shown as webhooks deliver it, is the one place for codes.
  const text = await page.evaluate(() => [...document.querySelectorAll('pre')].reduce((all, pre) => all.replace(pre.innerText, ''), document.body.innerText));
  return DEVELOPER_WORDS.flatMap((word) => {
    const found = word.exec(text);
    return found === null ? [] : [`${word}: …${text.slice(Math.max(0, found.index - 30), found.index + 30)}…`];
  });
}

/**
 * What has the focus once the page that answered an action has loaded (its deferred script moves
 * the focus to the action's result, so reading it as soon as the result is shown would race).
 */
async function focusedOnceLoaded(page: Page): Promise<{ role: string | null | undefined; text: string | null | undefined }> {
  await page.waitForLoadState('load');
  return page.evaluate(() => ({ role: document.activeElement?.getAttribute('role'), text: document.activeElement?.textContent }));
}

test('when a shop owner walks the main pages in Japanese after orders were paid, held, reversed and audited, then no page shows an identifier, an event or action code or a developer word', async () => {
  await webhookEndpoint(world, '/words');
  const paid = await world.merchant.createOrder({ amount: 5400, payer_name: 'スズキ イチロウ', external_id: 'EC-3001' });
  await world.merchant.deposit(5400, 'スズキ イチロウ');
  await world.merchant.createOrder({ amount: 3980, payer_name: 'サトウ ハナコ', external_id: 'EC-3002' });
  await world.merchant.createOrder({ amount: 3980, payer_name: 'サトウ ハナコ', external_id: 'EC-3003' });
  const held = await world.merchant.deposit(3980, 'ｻﾄｳ ﾊﾅｺ');
  const reversed = await world.merchant.createOrder({ amount: 2200, payer_name: 'タナカ ジロウ', external_id: 'EC-3004' });
  const reversedDeposit = await world.merchant.deposit(2200, 'タナカ ジロウ');
  await delivered(world, '/words', 'order.paid', paid.id);

  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/orders/${reversed.id}/reverse`);
  await page.getByRole('button', { name: '取り消しを実行する' }).click();
  await page.getByRole('status').waitFor();
  await page.goto(`${world.baseUrl}/dashboard/settings`);
  await page.getByRole('checkbox', { name: /カナ・全角半角の違い/ }).check();
  await page.getByRole('button', { name: '変更の影響を確認' }).click();
  const event = (await world.merchant.events('order.paid'))[0];

  const found: Record<string, string[]> = {};
  for (const path of [
    '/dashboard/',
    '/dashboard/deposits',
    '/dashboard/deposits?status=confirmed',
    `/dashboard/deposits/${held.id}?find=1`,
    `/dashboard/deposits/${reversedDeposit.id}`,
    '/dashboard/orders',
    `/dashboard/orders/${paid.id}`,
    `/dashboard/orders/${reversed.id}`,
    '/dashboard/events',
    `/dashboard/events/${event.id}`,
    '/dashboard/settings',
    '/dashboard/team',
    '/dashboard/audit',
  ]) {
    await page.goto(`${world.baseUrl}${path}`);
    const words = await developerWordsOn(page);
    if (words.length > 0) found[path.replace(/(ord|txn|evt)_\w+/, '$1_…')] = words;
  }

  expect(found).toEqual({});
  await page.goto(`${world.baseUrl}/dashboard/orders/${paid.id}`);
  expect(await page.locator('#payment').locator('..').innerText()).toContain('自動（照合ルール）');
  await page.goto(`${world.baseUrl}/dashboard/orders/${reversed.id}`);
  expect(await page.getByRole('list').filter({ hasText: '支払いの取り消し' }).innerText()).toContain(world.people.admin.email);
  await page.goto(`${world.baseUrl}/dashboard/audit`);
  expect(await page.getByRole('table', { name: '操作履歴' }).innerText()).toContain('支払いの取り消し');
});

test('when a viewer opens a page for admins, then the refusal says which role is needed and which one they have', async () => {
  const page = await world.logIn('viewer');
  const response = await page.goto(`${world.baseUrl}/dashboard/audit`);

  expect(response?.status()).toBe(403);
  expect(await page.getByRole('alert').innerText()).toContain('「管理者」以上の役割の人だけ');
  expect(await page.getByRole('alert').innerText()).toContain('あなたの役割は「閲覧者」');
});

test('when an admin saves a setting, then the focus is on the message saying it was saved, not at the top of the page', async () => {
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/settings`);
  await page.getByRole('button', { name: '保存' }).first().click();
  await page.waitForURL(/done=saved/);

  const focused = await focusedOnceLoaded(page);
  expect(focused).toEqual({ role: 'status', text: '設定を保存しました。' });
});

test('when an invitation is refused, then the refusal is on the invitation form, in Japanese only, focused, with the address entered kept', async () => {
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/team`);
  const invite = page.getByRole('region', { name: 'メンバーを招待' });
  await invite.getByLabel('メールアドレス').fill('not-an-address@');
  await invite.locator('select[name=role]').selectOption('operator');
  // The browser's own check of type=email would stop the form; the server's refusal is what is tested.
  await page.locator('input[name=email]').evaluate((input) => input.setAttribute('type', 'text'));
  await page.getByRole('button', { name: 'メンバーを招待' }).click();

  expect(await invite.getByRole('alert').innerText()).toBe('メールアドレスを正しく入力してください。');
  expect((await focusedOnceLoaded(page)).text).toBe('メールアドレスを正しく入力してください。');
  expect(await invite.getByLabel('メールアドレス').inputValue()).toBe('not-an-address@');
  expect(await invite.locator('select[name=role]').inputValue()).toBe('operator');
  expect(await page.locator('main').innerText()).not.toMatch(/[A-Za-z]{4,} [a-z]{2,} /);
});

test('when the last admin tries to give up the role, then the team page says exactly that, and the role stays', async () => {
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/team`);
  await page.getByLabel(`役割を変更: ${world.people.admin.email}`).selectOption('viewer');
  const row = page.getByRole('row').filter({ hasText: world.people.admin.email });
  await row.getByRole('button', { name: '保存' }).click();

  expect(await page.getByRole('alert').innerText()).toContain('この人はチームで最後の管理者なので、役割を変えることも削除することもできません');
  expect((await focusedOnceLoaded(page)).role).toBe('alert');
  const stored = await world.system.sql(`SELECT role FROM users WHERE id = '${world.people.admin.id}'`);
  expect(stored).toEqual([{ role: 'admin' }]);
});

test('when an order edit is refused, then the refusal is on the form, in Japanese, focused, with everything entered kept', async () => {
  const order = await world.merchant.createOrder({ amount: 1200, payer_name: 'ヘンシュウ ハナコ', external_id: 'EC-3101' });
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/orders/${order.id}/edit`);
  await page.getByLabel('金額').fill('0');
  await page.getByLabel('支払者名').fill('ヘンシュウ タロウ');
  await page.getByRole('button', { name: '保存' }).click();

  expect(await page.getByRole('alert').innerText()).toBe('金額は1円から9,999,999,999円までの整数で入力してください。');
  expect((await focusedOnceLoaded(page)).role).toBe('alert');
  expect(await page.getByLabel('金額').inputValue()).toBe('0');
  expect(await page.getByLabel('支払者名').inputValue()).toBe('ヘンシュウ タロウ');
  expect((await world.merchant.order(order.id)).amount).toBe(1200);
});

test('when a new webhook endpoint is refused, then the refusal is on its form, in Japanese, focused, with the URL and the chosen events kept', async () => {
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/webhooks`);
  const form = page.getByRole('region', { name: /^エンドポイントを追加/ });
  await form.getByLabel('URL').fill('http://example.com/hooks');
  await form.getByRole('checkbox', { name: /注文の作成/ }).uncheck();
  await form.getByRole('button').click();

  const refusal = await form.getByRole('alert').innerText();
  expect(refusal).toMatch(/[ぁ-ん]/);
  expect(refusal).not.toMatch(/[A-Za-z]{4,} [a-z]{2,}/);
  expect((await focusedOnceLoaded(page)).role).toBe('alert');
  expect(await form.getByLabel('URL').inputValue()).toBe('http://example.com/hooks');
  expect(await form.getByRole('checkbox', { name: /注文の作成/ }).isChecked()).toBe(false);
  expect(await form.getByRole('checkbox', { name: /注文の支払い/ }).isChecked()).toBe(true);
});
