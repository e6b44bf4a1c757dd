import { randomUUID } from 'node:crypto';
import { MerchantClient, TestSystem, adapterCredentials, adapterHeaders, api, waitFor, type AdapterCredentials } from '@pmatch/testkit';

/** The deposit state table (docs/guide.md), matching and excluding by hand, late orders and transaction reads. */

const MINUTE = 60 * 1000;
let system: TestSystem;
let merchant: MerchantClient;

beforeAll(async () => {
  system = await TestSystem.start();
  ({ client: merchant } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

const minutesAgo = (n: number) => new Date(system.now().getTime() - n * MINUTE).toISOString();

describe('match operation', () => {
  test('when the order was confirmed meanwhile, then 409 order_taken and a re-read shows it paid', async () => {
    const first = await merchant.createOrder({ amount: 2101 });
    const second = await merchant.createOrder({ amount: 2101 });
    const held = await merchant.deposit(2101);
    expect(held.status).toBe('held');
    const other = await merchant.deposit(2101, 'ﾍﾞﾂﾉ ﾋﾄ');
    await merchant.request('POST', `/v1/transactions/${other.id}/match`, { order_id: first.id });

    const res = await merchant.request('POST', `/v1/transactions/${held.id}/match`, { order_id: first.id });

    expectError(res, 409, 'order_taken');
    expect((await merchant.order(first.id)).status).toBe('paid');
    expect((await merchant.transaction(held.id)).status).toBe('held');
    const ok = await merchant.request('POST', `/v1/transactions/${held.id}/match`, { order_id: second.id });
    expect(ok.body).toMatchObject({ status: 'confirmed', order_id: second.id });
  });

  test('when the order has another amount, then 409 transaction_not_matchable and nothing changes', async () => {
    const order = await merchant.createOrder({ amount: 2102 });
    await merchant.createOrder({ amount: 2103 });
    await merchant.createOrder({ amount: 2103 });
    const held = await merchant.deposit(2103);

    expectError(await merchant.request('POST', `/v1/transactions/${held.id}/match`, { order_id: order.id }), 409, 'transaction_not_matchable');
    expect((await merchant.order(order.id)).status).toBe('open');
    expect((await merchant.transaction(held.id)).status).toBe('held');
  });

  test('when the order is on another bank account, then 409 transaction_not_matchable', async () => {
    const { orgId } = await system.createMerchant();
    const accounts = [];
    for (const number of ['1000001', '1000002']) {
      accounts.push(await system.addLiveBankAccount(orgId, { number, holder: 'ﾃｽﾄ' }));
    }
    const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'l')).key));
    const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', String(accounts[1]!.id));
    const order = await live.createOrder({ amount: 2104, bank_account_id: accounts[0]!.id, ordered_at: minutesAgo(10) });
    const notified = await notify(adapterCredentials(adapter), { bank_account_id: String(accounts[1]!.id), amount: 2104, counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
    const deposit = await waitForDecision(live, notified.transaction_id);
    expect(deposit.status).toBe('unmatched');

    expectError(await live.request('POST', `/v1/transactions/${deposit.id}/match`, { order_id: order.id }), 409, 'transaction_not_matchable');
  });

  test('when a held deposit is matched to an order on another bank account, then 409 transaction_not_matchable and nothing changes', async () => {
    const { orgId } = await system.createMerchant();
    const accounts = [];
    for (const number of ['1000011', '1000012']) {
      accounts.push(await system.addLiveBankAccount(orgId, { number, holder: 'ﾃｽﾄ' }));
    }
    const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'l')).key));
    const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', String(accounts[1]!.id));
    const elsewhere = await live.createOrder({ amount: 2106, bank_account_id: accounts[0]!.id, ordered_at: minutesAgo(10) });
    const tied = [];
    for (let i = 0; i < 2; i++) tied.push(await live.createOrder({ amount: 2106, bank_account_id: accounts[1]!.id, ordered_at: minutesAgo(10) }));
    const notified = await notify(adapterCredentials(adapter), { bank_account_id: String(accounts[1]!.id), amount: 2106, counterparty: 'ヤマダ タロウ' });
    const deposit = await waitForDecision(live, notified.transaction_id);
    expect(deposit).toMatchObject({ status: 'held', decision: { reason: 'several_orders_fit' } });

    expectError(await live.request('POST', `/v1/transactions/${deposit.id}/match`, { order_id: elsewhere.id }), 409, 'transaction_not_matchable');

    expect(await live.transaction(deposit.id)).toMatchObject({ status: 'held', candidate_order_ids: deposit.candidate_order_ids });
    for (const order of [elsewhere, ...tied]) expect((await live.order(order.id)).status).toBe('open');
  });

  test('when a confirmed deposit is matched again, then 409 transaction_not_matchable', async () => {
    const order = await merchant.createOrder({ amount: 2105 });
    const deposit = await merchant.deposit(2105);
    const another = await merchant.createOrder({ amount: 2105 });
    expectError(await merchant.request('POST', `/v1/transactions/${deposit.id}/match`, { order_id: another.id }), 409, 'transaction_not_matchable');
    expect((await merchant.order(order.id)).status).toBe('paid');
  });
});

describe('late orders', () => {
  test('when an order registered later has ordered_at before an unmatched deposit, then the deposit is held with transaction.held', async () => {
    const deposit = await merchant.deposit(2201);
    expect(deposit.status).toBe('unmatched');

    const order = await merchant.createOrder({ amount: 2201, ordered_at: minutesAgo(30) });

    const held = await waitForStatus(merchant, deposit.id, 'held');
    expect(held.candidate_order_ids).toEqual([order.id]);
    const event = (await merchant.events('transaction.held')).find((e) => e.data.object.id === deposit.id);
    expect(event.data.candidate_order_ids).toEqual([order.id]);
    expect((await merchant.order(order.id)).status).toBe('open');
  });

  test('when the late order was placed after the deposit, then the deposit stays unmatched', async () => {
    const deposit = await merchant.deposit(2202, 'ヤマダ タロウ', { occurred_at: minutesAgo(60) });
    const order = await merchant.createOrder({ amount: 2202, ordered_at: minutesAgo(30) });

    await system.processed('matcher.late-orders', `registered_${order.id}`);

    expect((await merchant.transaction(deposit.id)).status).toBe('unmatched');
    expect((await merchant.order(order.id)).status).toBe('open');
  });

  test('when the seller auto-confirms late orders, then one fitting deposit is confirmed with order.paid', async () => {
    const { client: seller } = await system.createMerchant();
    const settings = await seller.request('PATCH', '/v1/settings', { auto_confirm_late_orders: true });
    expect(settings.body).toMatchObject({ object: 'settings', auto_confirm_late_orders: true, livemode: false });
    const deposit = await seller.deposit(2203);

    const order = await seller.createOrder({ amount: 2203, ordered_at: minutesAgo(30) });

    const confirmed = await waitForStatus(seller, deposit.id, 'confirmed');
    expect(confirmed.order_id).toBe(order.id);
    expect(await seller.order(order.id)).toMatchObject({ status: 'paid', payment: { transaction_id: deposit.id, reason: 'exact' } });
    expect((await seller.eventTypes()).slice(-2)).toEqual(['order.created', 'order.paid']);
  });

  test('when several deposits fit one late order, then all are held even with auto-confirm', async () => {
    const { client: seller } = await system.createMerchant();
    await seller.request('PATCH', '/v1/settings', { auto_confirm_late_orders: true });
    // A day apart: two deposits of one name and amount on one day would be possible duplicates.
    const a = await seller.deposit(2204, 'ヤマダ タロウ', { occurred_at: minutesAgo(24 * 60) });
    const b = await seller.deposit(2204);

    const order = await seller.createOrder({ amount: 2204, ordered_at: minutesAgo(2 * 24 * 60) });

    for (const id of [a.id, b.id]) expect((await waitForStatus(seller, id, 'held')).candidate_order_ids).toEqual([order.id]);
    expect((await seller.order(order.id)).status).toBe('open');
  });
});

describe('exclude and restore', () => {
  test('when an open order has the amount, then exclude is refused with 409 open_order_with_same_amount', async () => {
    const order = await merchant.createOrder({ amount: 2301 });
    const deposit = await merchant.deposit(2301, 'ﾍﾞﾂﾉ ﾋﾄ');
    expect(deposit.status).toBe('held');

    expectError(await merchant.request('POST', `/v1/transactions/${deposit.id}/exclude`), 409, 'open_order_with_same_amount');

    await merchant.request('POST', `/v1/orders/${order.id}/cancel`);
    const excluded = await merchant.request('POST', `/v1/transactions/${deposit.id}/exclude`);
    expect(excluded.body).toMatchObject({ status: 'excluded', candidate_order_ids: [] });
    const restored = await merchant.request('POST', `/v1/transactions/${deposit.id}/restore`);
    expect(restored.body.status).toBe('unmatched');
  });

  test('when a held deposit is excluded and restored, then its decision says so instead of the old reason it was held for', async () => {
    const { client: seller } = await system.createMerchant();
    const order = await seller.createOrder({ amount: 2304 });
    const held = await seller.deposit(2304, 'ﾍﾞﾂﾉ ﾋﾄ');
    expect(held.decision.reason).toBe('no_name_fits');
    await seller.request('POST', `/v1/orders/${order.id}/cancel`);

    const excluded = await seller.request('POST', `/v1/transactions/${held.id}/exclude`);
    const restored = await seller.request('POST', `/v1/transactions/${held.id}/restore`);

    expect(excluded.body).toMatchObject({ status: 'excluded', decision: { reason: 'excluded', candidates: [] } });
    expect(restored.body).toMatchObject({ status: 'unmatched', decision: { reason: 'restored', candidates: [] } });
    expect((await seller.transaction(held.id)).decision).toEqual({ reason: 'restored', candidates: [] });
  });

  test('when a confirmed deposit is excluded or a non-excluded one restored, then 409', async () => {
    await merchant.createOrder({ amount: 2302 });
    const confirmed = await merchant.deposit(2302);
    const unmatched = await merchant.deposit(2303);

    expectError(await merchant.request('POST', `/v1/transactions/${confirmed.id}/exclude`), 409, 'transaction_not_excludable');
    expectError(await merchant.request('POST', `/v1/transactions/${unmatched.id}/restore`), 409, 'transaction_not_excluded');
  });
});

describe('transactions', () => {
  test('when transactions are listed, then newest first, filtered by status and paged with starting_after', async () => {
    const { client: seller } = await system.createMerchant();
    await seller.createOrder({ amount: 2401 });
    const confirmed = await seller.deposit(2401);
    const unmatched = [await seller.deposit(2402), await seller.deposit(2403)];

    const all = await seller.request('GET', '/v1/transactions');
    const onlyUnmatched = await seller.request('GET', '/v1/transactions?status=unmatched&limit=1');
    const next = await seller.request('GET', `/v1/transactions?status=unmatched&limit=1&starting_after=${onlyUnmatched.body.data[0].id}`);

    expect(all.body.data.map((t: any) => t.id)).toEqual([unmatched[1]!.id, unmatched[0]!.id, confirmed.id]);
    expect(onlyUnmatched.body).toMatchObject({ object: 'list', has_more: true, data: [{ id: unmatched[1]!.id }] });
    expect(next.body).toMatchObject({ has_more: false, data: [{ id: unmatched[0]!.id }] });
    expect(await seller.transaction(confirmed.id)).toMatchObject({ object: 'transaction', status: 'confirmed', direction: 'deposit' });
    expectError(await seller.request('GET', '/v1/transactions?status=bogus'), 400, 'parameter_invalid');
    expectError(await seller.request('GET', '/v1/transactions/txn_doesnotexist000000000'), 404, 'resource_missing');
  });

  test('when the bank reports a withdrawal, then it is stored with transaction.withdrawn and never matched', async () => {
    const { orgId } = await system.createMerchant();
    const account = await system.addLiveBankAccount(orgId, { number: '2000001', holder: 'ﾃｽﾄ' });
    const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'l')).key));
    const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', String(account.id));
    await live.createOrder({ amount: 2501, ordered_at: minutesAgo(10) });

    const notified = await notify(adapterCredentials(adapter), {
      bank_account_id: String(account.id),
      amount: 2501,
      counterparty: 'ﾃｽｳﾘﾖｳ',
      direction: 'withdrawal',
    });

    expect(notified.status).toBe(202);
    const withdrawn = await live.events('transaction.withdrawn');
    expect(withdrawn).toHaveLength(1);
    expect(withdrawn[0].data.object).toMatchObject({ id: notified.transaction_id, direction: 'withdrawal', amount: 2501 });
    expect(await live.eventTypes()).not.toContain('order.paid');
  });
});

async function notify(adapter: AdapterCredentials, fields: { bank_account_id: string; amount: number; counterparty: string; direction?: string }) {
  const body = JSON.stringify({
    bank_reference: `ref-${randomUUID()}`,
    direction: 'deposit',
    occurred_at: new Date(system.now().getTime() - MINUTE).toISOString(),
    ...fields,
  });
  const res = await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
    rawBody: body,
    headers: { 'content-type': 'application/json', ...adapterHeaders(adapter, body) },
  });
  return { status: res.status, transaction_id: res.body.transaction_id as string };
}

async function waitForStatus(client: MerchantClient, id: string, status: string): Promise<any> {
  return waitFor(
    async () => {
      const t = await client.transaction(id);
      return t.status === status ? t : undefined;
    },
    { what: `transaction ${id} to become ${status}` },
  );
}

async function waitForDecision(client: MerchantClient, id: string): Promise<any> {
  return waitFor(
    async () => {
      const t = await client.transaction(id);
      return t.status !== 'pending' ? t : undefined;
    },
    { what: `transaction ${id} to be decided` },
  );
}
