import { TestSystem, api } from '@pmatch/testkit';

let system: TestSystem;
let orgId: string;
let testKey: string;
let liveKey: string;
let testOrderId: string;
let liveOrderId: string;

const order = (externalId: string) => ({ amount: 2500, payer_name: 'スズキ ハナコ', external_id: externalId, item_name: 'Tシャツ' });

beforeAll(async () => {
  system = await TestSystem.start();
  ({ orgId, testKey } = await system.createMerchant());
  await system.addLiveBankAccount(orgId, { number: '1234567', holder: 'ｽｽﾞｷｼﾖｳﾃﾝ' });
  liveKey = String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'live')).key);
  testOrderId = (await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: order('t-1') })).body.id;
  liveOrderId = (await api(system.apiUrl, 'POST', '/v1/orders', { key: liveKey, body: order('l-1') })).body.id;
});

afterAll(async () => {
  await system?.stop();
});

function expectError(res: { status: number; body: any; headers: Headers }, status: number, type: string, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error).toMatchObject({ type, code });
  expect(res.body.error.request_id).toBe(res.headers.get('request-id'));
  expect(JSON.stringify(res.body)).not.toMatch(/at .*\.js:\d+/);
}

describe('authentication', () => {
  test('when the key is missing, then 401 invalid_api_key', async () => {
    expectError(await api(system.apiUrl, 'GET', `/v1/orders/${testOrderId}`), 401, 'authentication_error', 'invalid_api_key');
  });

  test('when the key is garbage or not a bearer token, then 401', async () => {
    expectError(await api(system.apiUrl, 'GET', '/v1/events', { key: 'garbage' }), 401, 'authentication_error', 'invalid_api_key');
    const basic = await api(system.apiUrl, 'GET', '/v1/events', { headers: { authorization: `Basic ${testKey}` } });
    expectError(basic, 401, 'authentication_error', 'invalid_api_key');
    const wellFormedUnknown = await api(system.apiUrl, 'GET', '/v1/events', { key: `svc_test_${'A'.repeat(32)}` });
    expectError(wellFormedUnknown, 401, 'authentication_error', 'invalid_api_key');
  });

  test('when the key is revoked, then 401', async () => {
    const issued = await system.ops('key', 'issue', '--org', orgId, '--mode', 'test', '--name', 'to revoke');
    expect((await api(system.apiUrl, 'GET', '/v1/events', { key: String(issued.key) })).status).toBe(200);

    await system.ops('key', 'revoke', '--key', String(issued.id));

    expectError(await api(system.apiUrl, 'GET', '/v1/events', { key: String(issued.key) }), 401, 'authentication_error', 'invalid_api_key');
  });

  test('when a read-only key POSTs, then 403 insufficient_scope and nothing is stored', async () => {
    const readOnly = String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'test', '--name', 'ro', '--permission', 'read_only')).key);

    expectError(await api(system.apiUrl, 'POST', '/v1/orders', { key: readOnly, body: order('ro-1') }), 403, 'permission_error', 'insufficient_scope');

    expect((await api(system.apiUrl, 'GET', `/v1/orders/${testOrderId}`, { key: readOnly })).status).toBe(200);
    const events = await api(system.apiUrl, 'GET', '/v1/events?type=order.created', { key: testKey });
    expect(events.body.data.map((e: any) => e.data.object.external_id)).not.toContain('ro-1');
  });
});

describe('the key before the body', () => {
  const post = (key: string | undefined, rawBody: string) =>
    api(system.apiUrl, 'POST', '/v1/orders', { ...(key === undefined ? {} : { key }), rawBody, headers: { 'content-type': 'application/json' } });
  const bodies = {
    malformed: '{"amount": 1,',
    'deeply nested': `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
    'larger than 1 MiB': JSON.stringify({ ...order('big'), item_name: 'x'.repeat(2 * 1024 * 1024) }),
  };

  test.each(Object.entries(bodies))('when a request without a valid key sends a %s body, then 401: the body is not read first', async (_what, rawBody) => {
    expectError(await post(undefined, rawBody), 401, 'authentication_error', 'invalid_api_key');
    expectError(await post(`svc_test_${'A'.repeat(32)}`, rawBody), 401, 'authentication_error', 'invalid_api_key');
  });

  test('when a read-only key sends a malformed body, then 403 insufficient_scope; with a read-write key the body is judged', async () => {
    const readOnly = String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'test', '--name', 'ro-body', '--permission', 'read_only')).key);

    expectError(await post(readOnly, bodies.malformed), 403, 'permission_error', 'insufficient_scope');
    expectError(await post(testKey, bodies.malformed), 400, 'invalid_request_error', 'invalid_json');
    expectError(await post(testKey, bodies['larger than 1 MiB']), 413, 'invalid_request_error', 'body_too_large');
  });
});

describe('modes never mix', () => {
  test('when a live key asks for a test order, then 404; and a test key for a live order, then 404', async () => {
    expectError(await api(system.apiUrl, 'GET', `/v1/orders/${testOrderId}`, { key: liveKey }), 404, 'not_found_error', 'resource_missing');
    expectError(await api(system.apiUrl, 'GET', `/v1/orders/${liveOrderId}`, { key: testKey }), 404, 'not_found_error', 'resource_missing');
    expect((await api(system.apiUrl, 'GET', `/v1/orders/${liveOrderId}`, { key: liveKey })).body.livemode).toBe(true);
  });

  test('when a live key posts a test deposit, then 404', async () => {
    const res = await api(system.apiUrl, 'POST', '/v1/test/deposits', { key: liveKey, body: { amount: 2500, counterparty: 'スズキ ハナコ' } });
    expectError(res, 404, 'not_found_error', 'resource_missing');
  });

  test('when events are listed, then each mode sees only its own', async () => {
    const live = await api(system.apiUrl, 'GET', '/v1/events', { key: liveKey });
    const test = await api(system.apiUrl, 'GET', '/v1/events', { key: testKey });
    expect(live.body.data.every((e: any) => e.livemode === true)).toBe(true);
    expect(test.body.data.every((e: any) => e.livemode === false)).toBe(true);
    expect(live.body.data.map((e: any) => e.data.object.id)).toContain(liveOrderId);
    expect(live.body.data.map((e: any) => e.data.object.id)).not.toContain(testOrderId);
  });

  test('when bank accounts are listed, then the test key sees its one test account first with its dedicated pool, and the live key its live one', async () => {
    const test = await api(system.apiUrl, 'GET', '/v1/bank-accounts', { key: testKey });
    const live = await api(system.apiUrl, 'GET', '/v1/bank-accounts', { key: liveKey });
    expect(test.body.data.map((account: any) => account.dedicated)).toEqual([false, true, true, true, true, true]);
    expect(test.body.data[0]).toMatchObject({ livemode: false });
    expect(live.body.data).toHaveLength(1);
    expect(live.body.data[0]).toMatchObject({ livemode: true, account_number_last4: '4567' });
    expect(JSON.stringify(live.body)).not.toContain('1234567');
  });

  test('when bank accounts are paged, then limit and starting_after walk them oldest first and an unknown cursor is 400', async () => {
    const org = String((await system.ops('org', 'create', '--name', 'Many accounts', '--owner-email', 'm@example.com')).id);
    const added: string[] = [];
    for (const number of ['1000001', '1000002', '1000003']) {
      added.push(String((await system.addLiveBankAccount(org, { number, holder: 'ﾀﾅｶｼﾖｳﾃﾝ' })).id));
    }
    const key = String((await system.ops('key', 'issue', '--org', org, '--mode', 'live', '--name', 'pager')).key);

    const first = await api(system.apiUrl, 'GET', '/v1/bank-accounts?limit=2', { key });
    const second = await api(system.apiUrl, 'GET', `/v1/bank-accounts?limit=2&starting_after=${first.body.data[1].id}`, { key });
    const unknown = await api(system.apiUrl, 'GET', `/v1/bank-accounts?starting_after=${added[0]}x`, { key });
    const typo = await api(system.apiUrl, 'GET', '/v1/bank-accounts?limt=2', { key });

    expect(first.body.data.map((a: any) => a.id)).toEqual(added.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    expect(second.body.data.map((a: any) => a.id)).toEqual(added.slice(2));
    expect(second.body.has_more).toBe(false);
    expectError(unknown, 400, 'invalid_request_error', 'parameter_invalid');
    expect(unknown.body.error.param).toBe('starting_after');
    expectError(typo, 400, 'invalid_request_error', 'parameter_unknown');
  });
});

describe('creating orders', () => {
  test('when expires_at is omitted, then it is 14 days after registration', async () => {
    const res = await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: order('exp-1') });
    expect(res.status).toBe(201);
    const lifetime = Date.parse(res.body.expires_at) - Date.parse(res.body.created_at);
    expect(lifetime).toBe(14 * 24 * 60 * 60 * 1000);
  });

  test('when ordered_at is more than 5 minutes ahead, then 400 ordered_at_in_future', async () => {
    const ahead = new Date(Date.now() + 6 * 60 * 1000).toISOString();
    const res = await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: { ...order('fut-1'), ordered_at: ahead } });
    expectError(res, 400, 'invalid_request_error', 'ordered_at_in_future');
    expect(res.body.error.param).toBe('ordered_at');
  });

  test('when several accounts are in scope and bank_account_id is omitted, then 400 naming bank_account_id', async () => {
    await system.addLiveBankAccount(orgId, { bank: '0009', branch: '002', number: '7777777', holder: 'ｽｽﾞｷｼﾖｳﾃﾝ' });

    const res = await api(system.apiUrl, 'POST', '/v1/orders', { key: liveKey, body: order('multi-1') });

    expectError(res, 400, 'invalid_request_error', 'parameter_missing');
    expect(res.body.error.param).toBe('bank_account_id');
  });

  test('when no account is in scope and bank_account_id is omitted, then 400 naming bank_account_id', async () => {
    const other = String((await system.ops('org', 'create', '--name', 'Empty', '--owner-email', 'e@example.com')).id);
    const key = String((await system.ops('key', 'issue', '--org', other, '--mode', 'live', '--name', 'l')).key);

    const res = await api(system.apiUrl, 'POST', '/v1/orders', { key, body: order('none-1') });

    expectError(res, 400, 'invalid_request_error', 'parameter_missing');
    expect(res.body.error.param).toBe('bank_account_id');
  });

  test('when the body has a wrong type, then 400 naming the parameter', async () => {
    const res = await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: { ...order('bad-1'), amount: '100' } });
    expectError(res, 400, 'invalid_request_error', 'parameter_invalid');
    expect(res.body.error.param).toBe('amount');
  });
});
