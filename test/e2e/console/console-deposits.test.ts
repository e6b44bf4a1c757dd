import { type Console, delivered, webhookEndpoint, useConsole } from './support';

let world: Console;
const HOOKS = '/deposit-hooks';

useConsole(async (started) => {
  world = started;
  await webhookEndpoint(world, HOOKS);
});

describe('held deposits', () => {
  test('when a deposit fits two orders, then the operator sees each candidate explained, confirms one, the API reads it paid, order.paid is delivered and the audit log names the operator', async () => {
    const first = await world.merchant.createOrder({ amount: 12345, payer_name: 'サトウ ハナコ', external_id: 'held-first' });
    const second = await world.merchant.createOrder({ amount: 12345, payer_name: 'サトウ ハナコ', external_id: 'held-second' });
    const deposit = await world.merchant.deposit(12345, 'サトウ ハナコ');
    expect(deposit.status).toBe('held');
    const page = await world.logIn('operator');

    await page.getByRole('link', { name: '入金', exact: true }).click();
    await page.getByRole('link', { name: 'サトウ ハナコ' }).first().click();

    const candidates = page.getByRole('table', { name: '候補の注文' });
    expect(await page.getByText('判定理由').innerText()).toContain('複数の注文が一致するため、人の確認が必要です');
    expect(await candidates.getByRole('row').count()).toBe(3);
    const secondRow = candidates.getByRole('row').filter({ hasText: 'held-second' });
    expect(await secondRow.innerText()).toContain('完全一致');
    expect(await secondRow.innerText()).toContain('複数の注文が一致するため');
    expect(await page.getByText('¥12,345').first().isVisible()).toBe(true);

    await page.getByRole('button', { name: 'この注文で確定（held-second）' }).click();

    expect(await page.getByRole('status').innerText()).toBe('入金を確定しました。');
    const order = await world.merchant.order(second.id);
    expect(order.status).toBe('paid');
    expect(order.payment).toMatchObject({ transaction_id: deposit.id, decided_by: `user:${world.people.operator.id}`, trigger: 'dashboard', reason: 'manual' });
    expect((await world.merchant.order(first.id)).status).toBe('open');
    const paid = await delivered(world, HOOKS, 'order.paid', second.id);
    expect(paid.data.object.payment.decided_by).toBe(`user:${world.people.operator.id}`);

    const admin = await world.logIn('admin');
    await admin.getByRole('link', { name: '操作履歴' }).click();
    // The matcher writes the row with the decision: one row, its outcome in it.
    const entry = admin.getByRole('row').filter({ hasText: deposit.id }).filter({ hasText: '"outcome":"done"' });
    expect(await entry.innerText()).toContain(world.people.operator.email);
    expect(await entry.innerText()).toContain('入金の確定（手動）');
    // The recorded codes are behind the row's disclosure.
    expect(await entry.textContent()).toContain('transaction.match');
    expect(await entry.textContent()).toContain(second.id);
  });

  test("when a held deposit's order is not among its candidates, then it can be matched to another open order of its account and amount found by search", async () => {
    const listed = await world.merchant.createOrder({ amount: 2222, payer_name: 'タナカ イチロウ', external_id: 'search-listed' });
    const deposit = await world.merchant.deposit(2222, 'スズキ ジロウ');
    const other = await world.merchant.createOrder({
      amount: 2222,
      payer_name: 'スズキ ハナコ',
      external_id: 'search-other',
      ordered_at: new Date(Date.parse(deposit.occurred_at) - 60_000).toISOString(),
    });
    const page = await world.logIn('operator');
    await page.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);
    expect(await page.getByText('判定理由').innerText()).toContain('名義が一致しません');

    await page.getByLabel('支払者名・注文番号で探す').fill('スズキ');
    await page.getByRole('button', { name: '検索' }).click();
    const found = page.getByRole('table', { name: '別の注文に消し込む' });
    expect(await found.innerText()).toContain('search-other');
    expect(await found.innerText()).not.toContain('search-listed');
    await page.getByRole('button', { name: 'この注文に消し込む: search-other' }).click();

    expect(await page.getByRole('status').innerText()).toBe('入金を確定しました。');
    expect((await world.merchant.order(other.id)).status).toBe('paid');
    expect((await world.merchant.order(listed.id)).status).toBe('open');
    expect((await world.merchant.transaction(deposit.id)).status).toBe('confirmed');
  });

  test('when the deposits page opens, then held deposits come first, each tab shows its count and each deposit its age, and the list can be searched by name, amount and date', async () => {
    await world.merchant.deposit(3333, 'ミツイ サブロウ');
    const page = await world.logIn('viewer');
    await page.goto(`${world.baseUrl}/dashboard/deposits`);
    expect(await page.getByRole('link', { name: /^保留 \(\d+\)$/ }).getAttribute('aria-current')).toBe('page');
    const [unmatched] = await world.system.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM transactions WHERE organisation_id = $1 AND status = 'unmatched' AND direction = 'deposit' AND mode = 'test'`,
      [world.orgId],
    );
    expect(await page.getByRole('link', { name: /^未消込 / }).innerText()).toBe(`未消込 (${unmatched!.n})`);

    await page.goto(`${world.baseUrl}/dashboard/deposits?status=unmatched`);
    await page.getByLabel('振込名義で検索').fill('ﾐﾂｲ');
    await page.getByLabel('金額（円）').fill('3,333');
    await page.getByRole('button', { name: '検索' }).click();

    const rows = page.getByRole('table').getByRole('row');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).innerText()).toContain('¥3,333');
    expect(await rows.nth(1).innerText()).toContain('0日経過');
    await page.getByLabel('金額（円）').fill('3334');
    await page.getByRole('button', { name: '検索' }).click();
    expect(await page.getByText('ありません。').isVisible()).toBe(true);
  });
});

describe('kana-insensitive search', () => {
  test('when a name is searched in hiragana, katakana or half-width kana, then each finds the deposit the bank printed without small kana, and the order taken in hiragana', async () => {
    const deposit = await world.merchant.deposit(5757, 'ｻﾄｳ ｷﾖｳｺ');
    expect(deposit.status).toBe('unmatched');
    const order = await world.merchant.createOrder({ amount: 5858, payer_name: 'さとう きょうこ', external_id: 'kana-search' });
    const page = await world.logIn('viewer');

    for (const term of ['さとう きょうこ', 'サトウキョウコ', 'ｻﾄｳ']) {
      await page.goto(`${world.baseUrl}/dashboard/deposits?status=unmatched`);
      await page.getByLabel('振込名義で検索').fill(term);
      await page.getByRole('button', { name: '検索' }).click();
      const rows = page.getByRole('table').getByRole('row');
      expect(await rows.count()).toBe(2);
      expect(await rows.nth(1).innerText()).toContain('¥5,757');
    }

    await page.goto(`${world.baseUrl}/dashboard/orders?payer_name=${encodeURIComponent('ｻﾄｳ ｷﾖｳｺ')}`);
    expect(await page.locator('main').innerText()).toContain(order.external_id);
    await page.goto(`${world.baseUrl}/dashboard/orders?payer_name=${encodeURIComponent('ｻﾄｳ ﾊﾅｺ')}`);
    expect(await page.locator('main').innerText()).not.toContain(order.external_id);
  });
});

describe('exclude and restore', () => {
  test('when an unmatched deposit is excluded and restored, then it is excluded, then unmatched again, each recorded in the audit log', async () => {
    const deposit = await world.merchant.deposit(4444, 'シラナイ ヒト');
    expect(deposit.status).toBe('unmatched');
    const page = await world.logIn('operator');
    await page.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);

    await page.getByRole('button', { name: '除外する（この店への入金ではない）' }).click();
    expect(await page.getByRole('status').innerText()).toBe('入金を除外しました。');
    await page.getByRole('button', { name: '除外を取り消す' }).click();

    expect(await page.getByRole('status').innerText()).toContain('除外を取り消しました');
    expect(await page.getByText('未消込').first().isVisible()).toBe(true);
    const actions = await world.system.sql(`SELECT action, detail->>'outcome' AS outcome FROM audit_log WHERE object_id = $1 ORDER BY id`, [deposit.id]);
    // The matcher writes each decision's one row in the decision's transaction.
    expect(actions.map((a) => `${a.action}:${a.outcome}`)).toEqual(['transaction.exclude:done', 'transaction.restore:done']);
  });

  test('when a deposit is excluded while an open order has its amount, then the console explains the 409 in words, the deposit stays as it was and the audit log has one refused row', async () => {
    await world.merchant.createOrder({ amount: 5555, payer_name: 'ホンダ ミキ', external_id: 'exclude-blocker' });
    const deposit = await world.merchant.deposit(5555, 'ベツジン');
    const page = await world.logIn('operator');
    await page.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);

    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/exclude')),
      page.getByRole('button', { name: '除外する（この店への入金ではない）' }).click(),
    ]);

    expect(response.status()).toBe(409);
    expect(await page.getByRole('alert').innerText()).toContain('同じ金額の受付中の注文があるため、この入金は除外できません');
    expect((await world.merchant.transaction(deposit.id)).status).toBe(deposit.status);
    const rows = await world.system.sql(`SELECT action, detail FROM audit_log WHERE object_id = $1 ORDER BY id`, [deposit.id]);
    expect(rows).toEqual([{ action: 'transaction.exclude', detail: { outcome: 'refused', code: 'open_order_with_same_amount' } }]);
  });
});
