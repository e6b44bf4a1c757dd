import { MerchantClient, TestSystem, api } from '@pmatch/testkit';

/** Endpoint rules 1–4 and 11–13, key scopes, settings, and how bad input is answered. */

let system: TestSystem;
let merchant: MerchantClient;
let orgId: string;

beforeAll(async () => {
  system = await TestSystem.start();
  ({ client: merchant, orgId } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
});

function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string, param?: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers.get('request-id'));
  if (param !== undefined) expect(res.body.error.param).toBe(param);
}

const countOrders = async () => Number((await system.sql('SELECT count(*)::int AS n FROM orders'))[0]!.n);
const countEvents = async () => Number((await system.sql('SELECT count(*)::int AS n FROM events'))[0]!.n);
const body = (externalId: string, extra: Record<string, unknown> = {}) => ({
  amount: 3000,
  payer_name: 'スズキ ハナコ',
  external_id: externalId,
  item_name: 'お茶',
  ...extra,
});

describe('Idempotency-Key', () => {
  test('when the same key and body are sent again, then the original response comes back and no second order exists', async () => {
    const first = await merchant.request('POST', '/v1/orders', body('idem-1'), { 'idempotency-key': 'key-1' });
    const again = await merchant.request('POST', '/v1/orders', body('idem-1'), { 'idempotency-key': 'key-1' });

    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect((await merchant.request('GET', '/v1/orders?external_id=idem-1')).body.data).toHaveLength(1);
  });

  test('when the key is reused with another body, then 400 idempotency_key_reused and nothing is stored', async () => {
    await merchant.request('POST', '/v1/orders', body('idem-2'), { 'idempotency-key': 'key-2' });
    const before = await countOrders();

    const res = await merchant.request('POST', '/v1/orders', body('idem-3'), { 'idempotency-key': 'key-2' });

    expectError(res, 400, 'idempotency_key_reused');
    expect(await countOrders()).toBe(before);
  });

  test('when the same key is sent concurrently, then one order is created and the others replay it or are told the key is in use', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () => merchant.request('POST', '/v1/orders', body('idem-4'), { 'idempotency-key': 'key-4' })),
    );

    const created = results.filter((r) => r.status === 201);
    const inUse = results.filter((r) => r.status === 409);
    expect(created.length + inUse.length).toBe(results.length);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of inUse) expect(r.body.error.code).toBe('idempotency_key_in_use');
    expect((await merchant.request('GET', '/v1/orders?external_id=idem-4')).body.data).toHaveLength(1);
  });

  test('when a key is used by another organisation, then it is a different key', async () => {
    const { client: other } = await system.createMerchant();
    const mine = await merchant.request('POST', '/v1/orders', body('idem-5'), { 'idempotency-key': 'shared-key' });
    const theirs = await other.request('POST', '/v1/orders', body('idem-5'), { 'idempotency-key': 'shared-key' });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
  });
});

describe('external_id', () => {
  test('when an external_id is reused with other content, then 409 external_id_conflict and nothing is overwritten', async () => {
    const original = await merchant.createOrder({ external_id: 'ext-c', amount: 3100 });
    const events = await countEvents();

    const res = await merchant.request('POST', '/v1/orders', body('ext-c', { amount: 3200 }));

    expectError(res, 409, 'external_id_conflict', 'external_id');
    expect(await merchant.order(original.id)).toEqual(original);
    expect(await countEvents()).toBe(events);
  });

  test('when an external_id is reused with the same content, then 200 and the existing order', async () => {
    const original = await merchant.createOrder(body('ext-s'));
    const res = await merchant.request('POST', '/v1/orders', body('ext-s'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(original);
  });
});

describe('listing orders', () => {
  test('when orders are listed, then newest first with status and external_id filters and cursor pages', async () => {
    const { client: shop } = await system.createMerchant();
    const a = await shop.createOrder({ amount: 3301 });
    const b = await shop.createOrder({ amount: 3302 });
    const c = await shop.createOrder({ amount: 3303 });
    await shop.request('POST', `/v1/orders/${b.id}/cancel`);

    const page1 = await shop.request('GET', '/v1/orders?limit=2');
    const page2 = await shop.request('GET', `/v1/orders?limit=2&starting_after=${page1.body.data[1].id}`);
    const open = await shop.request('GET', '/v1/orders?status=open');
    const byExternal = await shop.request('GET', `/v1/orders?external_id=${a.external_id}`);

    expect(page1.body).toMatchObject({ object: 'list', has_more: true });
    expect(page1.body.data.map((o: any) => o.id)).toEqual([c.id, b.id]);
    expect(page2.body).toMatchObject({ has_more: false, data: [{ id: a.id }] });
    expect(open.body.data.map((o: any) => o.id)).toEqual([c.id, a.id]);
    expect(byExternal.body.data.map((o: any) => o.id)).toEqual([a.id]);
    expectError(await shop.request('GET', '/v1/orders?limit=101'), 400, 'parameter_invalid', 'limit');
    expectError(await shop.request('GET', '/v1/orders?starting_after=ord_unknown00000000000000'), 400, 'parameter_invalid', 'starting_after');
    expectError(await shop.request('GET', '/v1/orders?sort=asc'), 400, 'parameter_unknown', 'sort');
  });
});

describe('live keys scoped to one bank account', () => {
  test('when a key is scoped to an account, then it sees and creates only there', async () => {
    const add = (number: string) =>
      system.ops('bank-account', 'add', '--org', orgId, '--mode', 'live', '--bank-code', '0001', '--branch-code', '001', '--account-number', number, '--holder-name', 'ｽｽﾞｷ');
    const [a, b] = [await add('3000001'), await add('3000002')];
    const all = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'all')).key));
    const scoped = new MerchantClient(
      system.apiUrl,
      String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'a', '--bank-account', String(a.id))).key),
    );
    const onB = await all.createOrder({ amount: 3401, bank_account_id: b.id });

    const created = await scoped.createOrder({ amount: 3402 });

    expect(created.bank_account_id).toBe(a.id);
    expect((await scoped.request('GET', '/v1/bank-accounts')).body.data.map((x: any) => x.id)).toEqual([a.id]);
    expectError(await scoped.request('GET', `/v1/orders/${onB.id}`), 404, 'resource_missing');
    expectError(await scoped.request('POST', '/v1/orders', body('scoped-b', { bank_account_id: b.id })), 400, 'parameter_invalid', 'bank_account_id');
    expect((await scoped.request('GET', '/v1/orders')).body.data.map((o: any) => o.id)).toEqual([created.id]);
    expect((await scoped.events()).every((e) => e.data.object.bank_account_id === a.id)).toBe(true);
    expectError(await all.request('POST', '/v1/orders', body('unscoped-none')), 400, 'parameter_missing', 'bank_account_id');
  });
});

describe('settings', () => {
  test('when settings are read and changed, then they show the change per mode', async () => {
    const { client: shop } = await system.createMerchant();
    expect((await shop.request('GET', '/v1/settings')).body).toEqual({
      object: 'settings',
      livemode: false,
      auto_confirm_late_orders: false,
      matching_rules: [],
    });

    const changed = await shop.request('PATCH', '/v1/settings', { matching_rules: ['kana_width', 'truncated'] });

    expect(changed.body).toMatchObject({ matching_rules: ['kana_width', 'truncated'], auto_confirm_late_orders: false });
    expectError(await shop.request('PATCH', '/v1/settings', { matching_rules: ['guess'] }), 400, 'parameter_invalid', 'matching_rules.0');
    expectError(await shop.request('PATCH', '/v1/settings', { matching_rules: ['kana_width', 'kana_width'] }), 400, 'parameter_invalid', 'matching_rules');
    expect((await shop.request('GET', '/v1/settings')).body.matching_rules).toEqual(['kana_width', 'truncated']);
  });
});

describe('bad input stores nothing', () => {
  const raw = (text: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    api(system.apiUrl, 'POST', '/v1/orders', { key: merchant.key, rawBody: text, headers });

  test('when the body is not JSON, an array, too deep or too large, then a clear 400/413', async () => {
    const before = await countOrders();

    expectError(await raw('{"amount": 1,'), 400, 'invalid_json');
    expectError(await raw('[1,2,3]'), 400, 'parameter_invalid');
    expectError(await raw('"text"'), 400, 'invalid_json');
    expectError(await raw(`${'['.repeat(5000)}${']'.repeat(5000)}`), 400, 'parameter_invalid');
    expectError(await raw(JSON.stringify(body('big', { item_name: 'x'.repeat(2 * 1024 * 1024) }))), 413, 'body_too_large');

    expect(await countOrders()).toBe(before);
  });

  test('when fields are missing, of the wrong type, unknown or out of bounds, then 400 naming the parameter', async () => {
    const before = await countOrders();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ payer_name: 'a', external_id: 'e', item_name: 'i' }, 'parameter_missing', 'amount'],
      [body('t1', { amount: 12.5 }), 'parameter_invalid', 'amount'],
      [body('t2', { amount: 0 }), 'parameter_invalid', 'amount'],
      [body('t3', { amount: 10_000_000_000 }), 'parameter_invalid', 'amount'],
      [body('t4', { payer_name: '   ' }), 'parameter_invalid', 'payer_name'],
      [body('t5', { payer_name: 'x'.repeat(101) }), 'parameter_invalid', 'payer_name'],
      [body('t6', { colour: 'red' }), 'parameter_unknown', 'colour'],
      [body('t7', { ordered_at: '2026-11-22 10:00' }), 'parameter_invalid', 'ordered_at'],
      [body('t8', { metadata: { k: 1 } }), 'parameter_invalid', 'metadata.k'],
      [body('t9', { bank_account_id: 'nope' }), 'parameter_invalid', 'bank_account_id'],
    ];
    for (const [input, code, param] of cases) {
      expectError(await merchant.request('POST', '/v1/orders', input), 400, code, param);
    }
    expect(await countOrders()).toBe(before);
  });

  test('when a path id is malformed or unknown, then 404 resource_missing', async () => {
    expectError(await merchant.request('GET', '/v1/orders/not-an-id'), 404, 'resource_missing');
    expectError(await merchant.request('POST', '/v1/orders/ord_unknown00000000000000/cancel'), 404, 'resource_missing');
    expectError(await merchant.request('GET', '/v1/nothing-here'), 404, 'resource_missing');
  });

  test('when a response is sent, then /v1 has no CORS headers and errors carry no internals', async () => {
    const res = await api(system.apiUrl, 'GET', '/v1/orders', { key: merchant.key, headers: { origin: 'https://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const bad = await raw('{"amount": 1,');
    expect(JSON.stringify(bad.body)).not.toMatch(/SyntaxError|at .*\.js|node_modules/);
  });
});
