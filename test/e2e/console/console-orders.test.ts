import { type Console, delivered, webhookEndpoint, useConsole } from './support';

let world: Console;
const HOOKS = '/order-hooks';

useConsole(async (started) => {
  world = started;
  await webhookEndpoint(world, HOOKS);
});

describe('orders', () => {
  test('when the orders are filtered by status, payer name and amount, then only those are listed, with yen separators and Tokyo times', async () => {
    await world.merchant.createOrder({ amount: 98765, payer_name: 'フィルタ タロウ', external_id: 'filter-me' });
    await world.merchant.createOrder({ amount: 1000, payer_name: 'フィルタ ジロウ', external_id: 'filter-other' });
    const page = await world.logIn('viewer');
    await page.goto(`${world.baseUrl}/dashboard/orders`);

    await page.getByLabel('状態').selectOption('open');
    await page.getByLabel('支払者名').fill('フィルタ');
    await page.getByLabel('金額（下限）').fill('50000');
    await page.getByRole('button', { name: '検索' }).click();

    const rows = page.getByRole('table', { name: '注文' }).getByRole('row');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).innerText()).toContain('filter-me');
    expect(await rows.nth(1).innerText()).toContain('¥98,765');
    expect(await rows.nth(1).innerText()).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+09:00/);
  });

  test('when a payment is 25 hours old, then the API refuses to reverse it (409 reverse_window_passed), and the console reverses it with a reason: the order reopens, the deposit is unmatched, order.payment_reversed is delivered', async () => {
    const order = await world.merchant.createOrder({ amount: 25000, payer_name: 'オソイ ヘンキン', external_id: 'late-reverse' });
    const deposit = await world.merchant.deposit(25000, 'オソイ ヘンキン');
    expect(deposit.status).toBe('confirmed');
    world.system.advanceClock(25 * 60 * 60 * 1000);

    const api = await world.merchant.request('POST', `/v1/orders/${order.id}/reverse`);
    expect(api.status).toBe(409);
    expect(api.body.error.code).toBe('reverse_window_passed');

    const page = await world.logIn('operator');
    await page.goto(`${world.baseUrl}/dashboard/orders/${order.id}`);
    await page.getByRole('link', { name: '支払いを取り消す' }).click();
    expect(await page.getByRole('status').first().innerText()).toContain('確定から24時間以上たっています');
    await page.getByLabel('取り消しの理由').fill('買い手の依頼で返金したため');
    await page.getByRole('button', { name: '取り消しを実行する' }).click();

    expect(await page.getByRole('status').innerText()).toContain('支払いを取り消しました');
    expect((await world.merchant.order(order.id)).status).toBe('open');
    expect((await world.merchant.transaction(deposit.id)).status).toBe('unmatched');
    const reversed = await delivered(world, HOOKS, 'order.payment_reversed', order.id);
    expect(reversed.data.reversal).toMatchObject({
      decided_by: `user:${world.people.operator.id}`,
      trigger: 'dashboard',
      reason: '買い手の依頼で返金したため',
    });
    expect(reversed.data.previous_payment.transaction_id).toBe(deposit.id);
    const [audit] = await world.system.sql(`SELECT detail FROM audit_log WHERE object_id = $1 AND action = 'order.reverse' AND detail->>'outcome' = 'done'`, [
      order.id,
    ]);
    expect(audit!.detail).toEqual({ reason: '買い手の依頼で返金したため', after_24_hours: true, outcome: 'done', status: 'open' });
    await page.goto(`${world.baseUrl}/dashboard/orders/${order.id}`);
    expect(await page.getByRole('region', { name: 'イベントの履歴' }).innerText()).toContain('支払いの取り消し');
  });

  test('when a late reversal is sent without a reason, then it is refused and the order stays paid', async () => {
    const order = await world.merchant.createOrder({ amount: 26000, payer_name: 'リユウ ナシ', external_id: 'late-no-reason' });
    await world.merchant.deposit(26000, 'リユウ ナシ');
    world.system.advanceClock(25 * 60 * 60 * 1000);
    const session = await world.session('operator');

    const res = await session.post(`/dashboard/orders/${order.id}/reverse`, { reason: '   ' });

    expect(res.status).toBe(400);
    expect(await res.text()).toContain('理由を入力してください');
    expect((await world.merchant.order(order.id)).status).toBe('paid');
  });

  test('when an open order is marked paid and another canceled, then the API reads paid_outside (decided by the person) and canceled', async () => {
    const toPay = await world.merchant.createOrder({ amount: 7000, external_id: 'mark-paid' });
    const toCancel = await world.merchant.createOrder({ amount: 7001, external_id: 'cancel-me' });
    const page = await world.logIn('operator');

    await page.goto(`${world.baseUrl}/dashboard/orders/${toPay.id}`);
    await page.getByRole('button', { name: '他で支払い済みにする' }).click();
    expect(await page.getByRole('status').innerText()).toBe('他で支払い済みにしました。');
    await page.goto(`${world.baseUrl}/dashboard/orders/${toCancel.id}`);
    await page.getByRole('button', { name: '注文をキャンセル' }).click();
    expect(await page.getByRole('status').innerText()).toBe('注文をキャンセルしました。');

    const paid = await world.merchant.order(toPay.id);
    expect(paid.status).toBe('paid_outside');
    expect(paid.payment).toMatchObject({ transaction_id: null, decided_by: `user:${world.people.operator.id}`, trigger: 'dashboard' });
    expect((await world.merchant.order(toCancel.id)).status).toBe('canceled');
    await delivered(world, HOOKS, 'order.canceled', toCancel.id);
  });

  test('when an open order is edited, then its amount, payer name and metadata change and order.updated is recorded', async () => {
    const order = await world.merchant.createOrder({ amount: 8000, payer_name: 'ヘンコウ マエ', external_id: 'edit-me' });
    const page = await world.logIn('operator');
    await page.goto(`${world.baseUrl}/dashboard/orders/${order.id}`);
    await page.getByRole('link', { name: '注文を編集' }).click();

    await page.getByLabel('金額').fill('8500');
    await page.getByLabel('支払者名').fill('ヘンコウ アト');
    await page.getByLabel('メタデータ').fill('{"note":"電話で変更"}');
    await page.getByRole('button', { name: '保存' }).click();

    expect(await page.getByRole('status').innerText()).toBe('注文を変更しました。');
    expect(await world.merchant.order(order.id)).toMatchObject({ amount: 8500, payer_name: 'ヘンコウ アト', metadata: { note: '電話で変更' } });
    await delivered(world, HOOKS, 'order.updated', order.id);
  });
});
