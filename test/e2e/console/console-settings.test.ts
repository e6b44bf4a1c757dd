import { type Console, ConsoleSession, PASSWORD, addPerson, emailTo, openPasswordSetupLink, setupLinkIn, useConsole, usePasswordSetupLink } from './support';

let world: Console;

useConsole(async (started) => {
  world = started;
});

describe('the first question about names', () => {
  test('when an admin first signs in, then the overview asks how names are compared, previews kana_width, and asks no more once the rules are kept', async () => {
    const viewer = await world.logIn('viewer');
    expect(await viewer.getByRole('heading', { name: 'はじめに: 名前の照合のしかた' }).count()).toBe(0);

    const page = await world.logIn('admin');
    const question = page.getByRole('region', { name: 'はじめに: 名前の照合のしかた' });
    expect(await question.innerText()).toContain('ﾔﾏﾀﾞ ﾀﾛｳ');
    await question.getByRole('button', { name: '有効にした場合を確認' }).click();
    expect(await page.locator('main').innerText()).toContain('→ カナ・全角半角の違い');
    expect((await world.merchant.request('GET', '/v1/settings')).body.matching_rules).toEqual([]);

    await page.goBack();
    await page.reload();
    await page.getByRole('region', { name: 'はじめに: 名前の照合のしかた' }).getByRole('button', { name: 'いまの設定のままにする' }).click();
    expect(await page.getByRole('status').innerText()).toContain('設定を保存しました');
    expect((await world.merchant.request('GET', '/v1/settings')).body.matching_rules).toEqual([]);
    await page.getByRole('link', { name: '概要' }).click();
    expect(await page.getByRole('heading', { name: '概要' }).count()).toBe(1);
    expect(await page.getByRole('region', { name: 'はじめに: 名前の照合のしかた' }).count()).toBe(0);
  });
});

describe('matching rules with a preview', () => {
  test('when the decorated rule is previewed, then the page lists exactly the held deposits that applying it then confirms, each for the order shown', async () => {
    // Names a bank decorated with a sender code: they fit only under the decorated rule, so are held.
    const fits1 = await world.merchant.createOrder({ amount: 11001, payer_name: 'ヤマダ タロウ', external_id: 'rule-1' });
    const fits2 = await world.merchant.createOrder({ amount: 11002, payer_name: 'カトウ ミキ', external_id: 'rule-2' });
    await world.merchant.createOrder({ amount: 11003, payer_name: 'イトウ ケン', external_id: 'rule-3a' });
    await world.merchant.createOrder({ amount: 11003, payer_name: 'イトウ ケン', external_id: 'rule-3b' });
    const willConfirm1 = await world.merchant.deposit(11001, '1234 ﾔﾏﾀﾞ ﾀﾛｳ');
    const willConfirm2 = await world.merchant.deposit(11002, 'ﾌﾘｺﾐ ｶﾄｳ ﾐｷ');
    const stillAmbiguous = await world.merchant.deposit(11003, '5678 ｲﾄｳ ｹﾝ');
    await world.merchant.createOrder({ amount: 11004, payer_name: 'キムラ ユウ', external_id: 'rule-4' });
    const otherName = await world.merchant.deposit(11004, 'ﾍﾞﾂﾉ ﾋﾄ');
    const held = [willConfirm1, willConfirm2, stillAmbiguous, otherName];
    expect(held.map((d) => d.status)).toEqual(['held', 'held', 'held', 'held']);

    const page = await world.logIn('admin');
    await page.getByRole('link', { name: '設定' }).click();
    await page.getByRole('checkbox', { name: /振込番号などの付加文字/ }).check();
    await page.getByRole('button', { name: '変更の影響を確認' }).click();

    const rows = page.locator('#preview tbody tr');
    const previewed = await rows.evaluateAll((trs) => trs.map((tr) => `${tr.getAttribute('data-transaction')}:${tr.getAttribute('data-order')}`));
    expect(previewed.sort()).toEqual([`${willConfirm1.id}:${fits1.id}`, `${willConfirm2.id}:${fits2.id}`].sort());
    expect(await page.locator('#preview').innerText()).toContain('振込番号などの付加文字を除いて一致');
    expect((await world.merchant.request('GET', '/v1/settings')).body.matching_rules).toEqual([]);

    await page.getByRole('button', { name: 'この内容で適用' }).click();

    expect(await page.getByRole('status').innerText()).toContain('2件の入金を確定しました');
    const after = await Promise.all(held.map((d) => world.merchant.transaction(d.id)));
    const confirmed = after.filter((t) => t.status === 'confirmed').map((t) => `${t.id}:${t.order_id}`);
    expect(confirmed.sort()).toEqual(previewed.sort());
    expect(
      after
        .filter((t) => t.status === 'held')
        .map((t) => t.id)
        .sort(),
    ).toEqual([stillAmbiguous.id, otherName.id].sort());
    expect((await world.merchant.request('GET', '/v1/settings')).body.matching_rules).toEqual(['decorated']);
    // The matcher wrote one audit row per deposit it confirmed, with that confirmation.
    const audited = await world.system.sql<{ object_id: string; order_id: string }>(
      `SELECT object_id, detail->>'order_id' AS order_id FROM audit_log WHERE action = 'settings.confirm_previewed' AND detail->>'outcome' = 'done' AND user_id = $1`,
      [world.people.admin.id],
    );
    expect(audited.map((r) => `${r.object_id}:${r.order_id}`).sort()).toEqual(previewed.sort());
    expect((await world.merchant.order(fits1.id)).payment).toMatchObject({
      decided_by: `user:${world.people.admin.id}`,
      trigger: 'dashboard',
      reason: 'rule:decorated',
    });
  });
});

describe('roles', () => {
  const PAGES = [
    '/dashboard/',
    '/dashboard/deposits',
    '/dashboard/orders',
    '/dashboard/events',
    '/dashboard/webhooks',
    '/dashboard/api-keys',
    '/dashboard/settings',
    '/dashboard/team',
    '/dashboard/account',
  ];

  test('when a viewer opens every page, then each shows; every action they forge (with a valid CSRF token) is 403 and changes nothing', async () => {
    const order = await world.merchant.createOrder({ amount: 31000, external_id: 'viewer-target' });
    const deposit = await world.merchant.deposit(31001, 'ビューア テスト');
    const endpoint = await world.merchant.request('POST', '/v1/webhook-endpoints', { url: world.receiver.url('/viewer') });
    const viewer = await world.session('viewer');

    const pages = await Promise.all(PAGES.map(async (path) => [path, (await viewer.get(path)).status]));
    const forged = await Promise.all(
      [
        [`/dashboard/orders/${order.id}/cancel`, {}],
        [`/dashboard/orders/${order.id}/mark-paid`, {}],
        [`/dashboard/orders/${order.id}/edit`, { amount: '1', payer_name: 'x', metadata: '{}' }],
        [`/dashboard/deposits/${deposit.id}/exclude`, {}],
        [`/dashboard/deposits/${deposit.id}/match`, { order_id: order.id }],
        [`/dashboard/webhooks/${endpoint.body.id}/delete`, {}],
        ['/dashboard/api-keys', { name: 'stolen' }],
        ['/dashboard/settings/auto-confirm', { auto_confirm_late_orders: 'true' }],
        ['/dashboard/team', { email: 'intruder@example.com', role: 'admin' }],
      ].map(async ([path, fields]) => [path, (await viewer.post(path as string, fields as Record<string, string>)).status]),
    );

    expect(pages).toEqual(PAGES.map((path) => [path, 200]));
    expect((await viewer.get('/dashboard/audit')).status).toBe(403);
    expect(forged.every(([, status]) => status === 403)).toBe(true);
    expect((await world.merchant.order(order.id)).status).toBe('open');
    expect((await world.merchant.transaction(deposit.id)).status).toBe('unmatched');
    expect((await world.merchant.request('GET', `/v1/webhook-endpoints/${endpoint.body.id}`)).status).toBe(200);
    expect(await world.system.sql(`SELECT count(*)::int AS n FROM users WHERE email = 'intruder@example.com'`)).toEqual([{ n: 0 }]);
    expect(await world.system.sql(`SELECT count(*)::int AS n FROM api_keys WHERE name = 'stolen'`)).toEqual([{ n: 0 }]);
  });

  test('when an operator tries to manage keys, endpoints, users or settings, then each is 403; deciding an order is allowed', async () => {
    const endpoint = await world.merchant.request('POST', '/v1/webhook-endpoints', { url: world.receiver.url('/operator') });
    const order = await world.merchant.createOrder({ amount: 32000, external_id: 'operator-target' });
    const operator = await world.session('operator');

    const refused = await Promise.all(
      [
        ['/dashboard/api-keys', { name: 'mine' }],
        [`/dashboard/webhooks/${endpoint.body.id}`, { enabled: 'false' }],
        [`/dashboard/webhooks/${endpoint.body.id}/secret`, { password: PASSWORD }],
        ['/dashboard/webhooks', { url: world.receiver.url('/operator-new') }],
        ['/dashboard/team', { email: 'friend@example.com', role: 'operator' }],
        [`/dashboard/team/${world.people.viewer.id}/role`, { role: 'admin' }],
        ['/dashboard/settings/auto-confirm', { auto_confirm_late_orders: 'true' }],
        ['/dashboard/settings/rules/apply', { rules: 'truncated' }],
      ].map(async ([path, fields]) => (await operator.post(path as string, fields as Record<string, string>)).status),
    );
    const cancel = await operator.post(`/dashboard/orders/${order.id}/cancel`);

    expect(refused).toEqual(Array(8).fill(403));
    expect(cancel.status).toBe(303);
    expect((await world.merchant.order(order.id)).status).toBe('canceled');
    expect((await world.merchant.request('GET', `/v1/webhook-endpoints/${endpoint.body.id}`)).body.enabled).toBe(true);
    expect((await world.merchant.request('GET', '/v1/settings')).body.auto_confirm_late_orders).toBe(false);
  });
});

describe('team', () => {
  test('when an admin invites a person, changes their role and removes them, then the e-mailed link works once, the role applies, and once removed they cannot log in', async () => {
    const page = await world.logIn('admin');
    await page.getByRole('link', { name: 'チーム' }).click();
    const invite = page.locator('form').filter({ has: page.getByRole('button', { name: 'メンバーを招待' }) });
    await invite.getByLabel('メールアドレス').fill('newcomer@example.com');
    await invite.getByLabel('役割').selectOption('operator');
    await page.getByRole('button', { name: 'メンバーを招待' }).click();
    expect(await page.getByRole('status').innerText()).toBe('newcomer@example.com に招待メールを送りました。リンクは24時間有効です。');
    const email = await emailTo(world.system, 'newcomer@example.com', /テスト商店/);
    expect(email.text).toContain('役割: 担当者');
    const link = setupLinkIn(email);
    expect(link).toMatch(/\/dashboard\/setup-password\?token=[0-9A-Za-z]{40}$/);
    expect((await usePasswordSetupLink(link, PASSWORD)).status).toBe(303);
    expect((await openPasswordSetupLink(link)).page.status).toBe(404);
    const newcomer = await ConsoleSession.logIn(world.baseUrl, 'newcomer@example.com', PASSWORD);

    await page.goto(`${world.baseUrl}/dashboard/team`);
    await page.getByLabel('役割を変更: newcomer@example.com').selectOption('viewer');
    await page.getByRole('row').filter({ hasText: 'newcomer@example.com' }).getByRole('button', { name: '保存' }).click();
    expect((await newcomer.post('/dashboard/settings/auto-confirm', { auto_confirm_late_orders: 'true' })).status).toBe(403);
    await page.getByRole('link', { name: 'メンバーを削除: newcomer@example.com' }).click();
    expect(await page.getByRole('heading', { level: 2 }).innerText()).toBe('newcomer@example.com をチームから削除しますか？');
    await page.getByRole('button', { name: 'メンバーを削除' }).click();

    expect(await page.getByRole('status').innerText()).toBe('メンバーを削除しました。');
    expect((await newcomer.get('/dashboard/')).status).toBe(303);
    await expect(ConsoleSession.logIn(world.baseUrl, 'newcomer@example.com', PASSWORD)).rejects.toThrow(/not logged in: 401/);
  });

  test('when the last admin would lose the role, then the change is refused', async () => {
    const solo = await world.system.createMerchant({ name: 'ひとりの店' });
    const admin = await addPerson(world.system, solo.orgId, 'admin', 'solo-admin@example.com');
    const session = await ConsoleSession.logIn(world.baseUrl, admin.email, PASSWORD);

    const res = await session.post(`/dashboard/team/${admin.id}/role`, { role: 'viewer' });

    expect(res.status).toBe(400);
    expect(await world.system.sql(`SELECT role FROM users WHERE id = $1`, [admin.id])).toEqual([{ role: 'admin' }]);
  });
});
