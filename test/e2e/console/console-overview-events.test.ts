import { type Console, useConsole } from './support';

let world: Console;

useConsole(async (started) => {
  world = started;
});

test('when the morning starts, then the overview counts held and unmatched deposits, open orders, orders expiring today and endpoints in trouble, and lists the latest events', async () => {
  const tomorrow = new Date(world.system.now().getTime() + 26 * 60 * 60 * 1000).toISOString();
  await world.merchant.createOrder({ amount: 100, payer_name: 'ガイヨウ イチ', expires_at: tomorrow });
  await world.merchant.createOrder({ amount: 100, payer_name: 'ガイヨウ イチ', expires_at: tomorrow });
  await world.merchant.deposit(100, 'ガイヨウ イチ');
  await world.merchant.deposit(101, 'ダレ デモナイ');
  const soon = new Date(world.system.now().getTime() + 60 * 1000).toISOString();
  await world.merchant.createOrder({ amount: 102, expires_at: soon });
  const endpoint = await world.merchant.request('POST', '/v1/webhook-endpoints', { url: world.receiver.url('/overview') });
  await world.system.sql(`UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing' WHERE id = $1`, [endpoint.body.id]);

  const page = await world.logIn('viewer');

  const figure = async (title: string) =>
    page
      .locator('.card')
      .filter({ has: page.getByRole('heading', { name: title }) })
      .locator('.figure')
      .innerText();
  expect(await figure('確認待ちの入金（保留）')).toBe('1');
  expect(await figure('未消込の入金')).toBe('1');
  expect(await figure('受付中の注文')).toBe('3');
  expect(await figure('失敗中・停止中のWebhook')).toBe('1');
  // The order expiring in a minute expires today unless today ends (in Tokyo) within that minute.
  const tokyoDate = (at: Date | string) => new Date(new Date(at).getTime() + 9 * 60 * 60 * 1000).toISOString().slice(0, 10);
  expect(await figure('今日期限を迎える注文')).toBe(tokyoDate(world.system.now()) === tokyoDate(soon) ? '1' : '0');
  expect(await page.getByRole('table').innerText()).toContain('入金の保留');
});

test('when events are filtered by type and one is opened, then only that type is listed and the detail shows the JSON exactly as delivered', async () => {
  const order = await world.merchant.createOrder({ amount: 4321, external_id: 'event-json' });
  const [created] = (await world.merchant.events('order.created')).filter((e) => e.data.object.id === order.id);
  const page = await world.logIn('viewer');
  await page.goto(`${world.baseUrl}/dashboard/events`);

  await page.getByLabel('種類').selectOption('order.created');
  await page.getByRole('button', { name: '検索' }).click();
  const types = await page.getByRole('table').locator('tbody tr td:nth-child(2)').allInnerTexts();
  expect(new Set(types)).toEqual(new Set(['注文の作成']));
  await page.getByRole('row').filter({ hasText: '注文 event-json' }).getByRole('link', { name: /^詳細/ }).click();

  expect(JSON.parse(await page.locator('pre').innerText())).toEqual(created);
});
