import { waitFor } from '@pmatch/testkit';
import { type Console, PASSWORD, delivered, useConsole } from './support';

let world: Console;

useConsole(async (started) => {
  world = started;
});

describe('webhook endpoints', () => {
  test('when an admin creates an endpoint, sends a test event, searches the log by event id and resends one delivery, then the receiver gets each', async () => {
    const page = await world.logIn('admin');
    await page.getByRole('link', { name: 'Webhook', exact: true }).click();
    await page.getByLabel('URL（https）').fill(world.receiver.url('/console-made'));
    await page.getByRole('button', { name: 'エンドポイントを追加' }).click();
    expect(await page.getByRole('status').innerText()).toBe('エンドポイントを追加しました。');

    await page.getByRole('button', { name: 'テストイベントを送る' }).click();
    const testId = new URL(page.url()).searchParams.get('test_event')!;
    await waitFor(() => world.receiver.requestsTo('/console-made').find((r) => r.headers['webhook-id'] === testId));

    const order = await world.merchant.createOrder({ amount: 600, external_id: 'log-search' });
    const createdEvent = await delivered(world, '/console-made', 'order.created', order.id);
    await world.merchant.createOrder({ amount: 601 });
    await page.reload();
    await page.getByLabel('イベントID（evt_…）で検索').fill(createdEvent.id);
    await page.getByRole('button', { name: '検索' }).click();
    const log = page.getByRole('table', { name: '配信ログ' });
    await waitFor(async () => ((await log.getByRole('row').count()) === 2 ? true : (await page.reload(), undefined)));
    expect(await log.innerText()).toContain(createdEvent.id);
    expect(await log.innerText()).toContain('200');

    await page.getByRole('button', { name: `再送 ${createdEvent.id}` }).click();

    expect(await page.getByRole('status').innerText()).toContain(createdEvent.id);
    await waitFor(
      () => (world.receiver.requestsTo('/console-made').filter((r) => r.headers['webhook-id'] === createdEvent.id).length === 2 ? true : undefined),
      {
        what: 'the resent delivery',
      },
    );
  });

  test('when an endpoint was switched off for failing, then the admin switches it back on and it receives events again', async () => {
    const created = await world.merchant.request('POST', '/v1/webhook-endpoints', { url: world.receiver.url('/switched-off') });
    // As the dispatcher leaves an endpoint after 72 hours of failures.
    await world.system.sql(
      `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', failing_since = now() - interval '73 hours' WHERE id = $1`,
      [created.body.id],
    );
    const page = await world.logIn('admin');
    await page.goto(`${world.baseUrl}/dashboard/webhooks/${created.body.id}`);
    expect(await page.getByText('失敗が72時間続いたため自動停止').isVisible()).toBe(true);

    await page.getByRole('button', { name: '有効にする（再開）' }).click();

    expect((await world.merchant.request('GET', `/v1/webhook-endpoints/${created.body.id}`)).body).toMatchObject({
      enabled: true,
      disabled_reason: null,
      failing_since: null,
    });
    const order = await world.merchant.createOrder({ amount: 602 });
    await delivered(world, '/switched-off', 'order.created', order.id);
  });

  test('when the admin shows the secret, then the password is asked again; a wrong one shows nothing', async () => {
    const created = await world.merchant.request('POST', '/v1/webhook-endpoints', { url: world.receiver.url('/secret') });
    const page = await world.logIn('admin');
    await page.goto(`${world.baseUrl}/dashboard/webhooks/${created.body.id}`);
    const reveal = page.locator('form').filter({ has: page.getByRole('button', { name: 'シークレットを表示' }) });

    await reveal.getByLabel('パスワードを再入力').fill('not my password');
    await reveal.getByRole('button', { name: 'シークレットを表示' }).click();
    expect(await page.getByRole('alert').innerText()).toBe('パスワードが正しくありません。');
    expect(await page.content()).not.toContain(created.body.secret);

    await page
      .locator('form')
      .filter({ has: page.getByRole('button', { name: 'シークレットを表示' }) })
      .getByLabel('パスワードを再入力')
      .fill(PASSWORD);
    await page.getByRole('button', { name: 'シークレットを表示' }).click();
    expect(await page.locator('#secret-text').innerText()).toBe(created.body.secret);
  });
});

describe('API keys', () => {
  test('when an admin issues a key, then its text is shown once and works; revoking asks first, and once revoked the next API call with it is 401', async () => {
    const page = await world.logIn('admin');
    await page.getByRole('link', { name: 'APIキー' }).click();
    await page.getByLabel('名前').fill('会計ソフト');
    await page.getByLabel('権限').selectOption('read_only');
    await page.getByRole('button', { name: 'APIキーを発行' }).click();

    const keyText = await page.locator('#key-text').innerText();
    expect(keyText).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);
    // The copy button is shown by the console's script once the page has loaded.
    const copy = page.getByRole('button', { name: 'コピー' });
    await copy.waitFor({ state: 'visible' });
    expect(await copy.isVisible()).toBe(true);
    const call = () => fetch(`${world.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${keyText}` } });
    expect((await call()).status).toBe(200);
    await page.goto(`${world.baseUrl}/dashboard/api-keys`);
    expect(await page.content()).not.toContain(keyText);
    const row = page.getByRole('row').filter({ hasText: '会計ソフト' });
    await waitFor(async () => ((await row.innerText()).includes('まだ使われていません') ? (await page.reload(), undefined) : true), {
      what: 'last used to show',
    });

    await row.getByRole('link', { name: '失効させる: 会計ソフト' }).click();
    expect((await call()).status).toBe(200);
    await page.getByRole('button', { name: '失効させる' }).click();

    expect(await page.getByRole('status').innerText()).toBe('APIキーを失効させました。');
    expect((await call()).status).toBe(401);
  });
});
