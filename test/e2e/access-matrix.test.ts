import { MerchantClient, TestSystem, api } from '@pmatch/testkit';

/**
 * Every /v1 endpoint × every kind of caller: the spec's status for each, and no response to a
 * caller without access ever carries the object's content.
 */

let system: TestSystem;
const MARKER = 'ZZ-TENANT-A-PRIVATE';

interface Target {
  testOrder: string;
  testTransaction: string;
  liveOrder: string;
  testEndpoint: string;
  testEvent: string;
}

let target: Target;
const callers: Record<string, string | undefined> = {};

beforeAll(async () => {
  system = await TestSystem.start({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '80', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' });
  const a = await system.createMerchant({ name: 'Tenant A' });
  const orgA = a.orgId;
  const add = (number: string) =>
    system.ops('bank-account', 'add', '--org', orgA, '--mode', 'live', '--bank-code', '0001', '--branch-code', '001', '--account-number', number, '--holder-name', 'ｴｰ');
  const [liveAccount, otherAccount] = [await add('4000001'), await add('4000002')];
  const issue = async (...args: string[]) => String((await system.ops('key', 'issue', '--org', orgA, '--name', 'k', ...args)).key);
  const revoked = await system.ops('key', 'issue', '--org', orgA, '--mode', 'test', '--name', 'revoked');
  await system.ops('key', 'revoke', '--key', String(revoked.id));
  const b = await system.createMerchant({ name: 'Tenant B' });

  callers['no key'] = undefined;
  callers['garbage key'] = 'svc_test_not-a-real-key';
  callers['revoked key'] = String(revoked.key);
  callers['read-only key'] = await issue('--mode', 'test', '--permission', 'read_only');
  callers['test key'] = a.testKey;
  callers['live key'] = await issue('--mode', 'live');
  callers['live key scoped to another account'] = await issue('--mode', 'live', '--bank-account', String(otherAccount.id));
  callers['key of another organisation'] = b.testKey;

  const testClient = a.client;
  const live = new MerchantClient(system.apiUrl, callers['live key']!);
  const order = await testClient.createOrder({ amount: 6100, payer_name: MARKER, item_name: MARKER });
  await testClient.createOrder({ amount: 6200, payer_name: MARKER });
  const deposit = await testClient.deposit(6300, MARKER);
  const liveOrder = await live.createOrder({ amount: 6100, payer_name: MARKER, bank_account_id: liveAccount.id });
  const endpoint = await testClient.request('POST', '/v1/webhook-endpoints', { url: `https://127.0.0.1:9/${MARKER}` });
  expect(endpoint.status).toBe(201);
  const [event] = await testClient.events('order.created');
  target = { testOrder: order.id, testTransaction: deposit.id, liveOrder: liveOrder.id, testEndpoint: endpoint.body.id, testEvent: event.id };
}, 300_000);

afterAll(async () => {
  await system?.stop();
});

type Who = keyof typeof callers;
const ALL: Who[] = ['no key', 'garbage key', 'revoked key', 'read-only key', 'test key', 'live key', 'live key scoped to another account', 'key of another organisation'];

interface Endpoint {
  method: string;
  path: (t: Target) => string;
  body?: (t: Target) => unknown;
  /** Who owns the object the endpoint is about: its test-mode owner, its live-mode owner, or nobody (lists). */
  owner: 'test key' | 'live key' | 'list';
  /** Reads that still need a read-write key (a webhook secret). */
  readWriteOnly?: true;
}

const ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: (t) => `/v1/orders/${t.testOrder}`, owner: 'test key' },
  { method: 'PATCH', path: (t) => `/v1/orders/${t.testOrder}`, body: () => ({ metadata: { k: 'v' } }), owner: 'test key' },
  { method: 'POST', path: (t) => `/v1/orders/${t.testOrder}/reverse`, owner: 'test key' },
  { method: 'POST', path: (t) => `/v1/orders/${t.testOrder}/mark-paid`, body: () => ({}), owner: 'test key' },
  { method: 'POST', path: (t) => `/v1/orders/${t.testOrder}/cancel`, owner: 'test key' },
  { method: 'GET', path: (t) => `/v1/orders/${t.liveOrder}`, owner: 'live key' },
  { method: 'PATCH', path: (t) => `/v1/orders/${t.liveOrder}`, body: () => ({ metadata: { k: 'v' } }), owner: 'live key' },
  { method: 'GET', path: (t) => `/v1/transactions/${t.testTransaction}`, owner: 'test key' },
  { method: 'POST', path: (t) => `/v1/transactions/${t.testTransaction}/match`, body: (t) => ({ order_id: t.testOrder }), owner: 'test key' },
  { method: 'POST', path: (t) => `/v1/transactions/${t.testTransaction}/exclude`, owner: 'test key' },
  { method: 'POST', path: (t) => `/v1/transactions/${t.testTransaction}/restore`, owner: 'test key' },
  { method: 'GET', path: () => '/v1/orders', owner: 'list' },
  { method: 'GET', path: () => '/v1/transactions', owner: 'list' },
  { method: 'GET', path: () => '/v1/events', owner: 'list' },
  { method: 'GET', path: () => '/v1/bank-accounts', owner: 'list' },
  { method: 'GET', path: () => '/v1/settings', owner: 'list' },
  { method: 'PATCH', path: () => '/v1/settings', body: () => ({ auto_confirm_late_orders: false }), owner: 'list' },
  { method: 'POST', path: () => '/v1/orders', body: () => ({ amount: 1, payer_name: 'x', external_id: `m-${Math.random()}`, item_name: 'x' }), owner: 'list' },
  { method: 'POST', path: () => '/v1/test/deposits', body: () => ({ amount: 6999, counterparty: 'x' }), owner: 'list' },
  { method: 'GET', path: () => '/v1/webhook-endpoints', owner: 'list' },
  { method: 'POST', path: () => '/v1/webhook-endpoints', body: () => ({ url: 'https://127.0.0.1:9/other' }), owner: 'list' },
  { method: 'GET', path: (t) => `/v1/webhook-endpoints/${t.testEndpoint}`, owner: 'test key' },
  { method: 'PATCH', path: (t) => `/v1/webhook-endpoints/${t.testEndpoint}`, body: () => ({ enabled: true }), owner: 'test key' },
  { method: 'GET', path: (t) => `/v1/webhook-endpoints/${t.testEndpoint}/secret`, owner: 'test key', readWriteOnly: true },
  { method: 'POST', path: (t) => `/v1/webhook-endpoints/${t.testEndpoint}/rotate-secret`, owner: 'test key' },
  { method: 'POST', path: (t) => `/v1/webhook-endpoints/${t.testEndpoint}/test`, owner: 'test key' },
  { method: 'GET', path: (t) => `/v1/webhook-endpoints/${t.testEndpoint}/deliveries`, owner: 'test key' },
  { method: 'POST', path: (t) => `/v1/webhook-endpoints/${t.testEndpoint}/deliveries/resend`, body: (t) => ({ event_id: t.testEvent }), owner: 'test key' },
  { method: 'DELETE', path: (t) => `/v1/webhook-endpoints/${t.testEndpoint}`, owner: 'test key' },
];

/** The spec's answer for a caller, before what the object's state makes of an allowed request. */
function expected(endpoint: Endpoint, who: Who): 'allowed' | 401 | 403 | 404 {
  if (who === 'no key' || who === 'garbage key' || who === 'revoked key') return 401;
  const write = endpoint.method !== 'GET' || endpoint.readWriteOnly === true;
  if (who === 'read-only key' && write) return 403;
  if (endpoint.owner === 'list') return endpoint.path(target) === '/v1/test/deposits' && who.startsWith('live') ? 404 : 'allowed';
  if (who === 'read-only key') return endpoint.owner === 'test key' ? 'allowed' : 404;
  return who === endpoint.owner ? 'allowed' : 404;
}

describe('access matrix', () => {
  // Allowed calls change state, so every refused call runs first, against untouched objects, and
  // deletes run last of all.
  const cells = ENDPOINTS.flatMap((endpoint) => ALL.map((who) => ({ endpoint, who, want: expected(endpoint, who) })));
  const allowed = cells.filter((c) => c.want === 'allowed');
  const ordered = [
    ...cells.filter((c) => c.want !== 'allowed'),
    ...allowed.filter((c) => c.endpoint.method !== 'DELETE'),
    ...allowed.filter((c) => c.endpoint.method === 'DELETE'),
  ];

  test.each(ordered.map((c) => [`${c.endpoint.method} ${c.endpoint.path({ testOrder: '{test order}', testTransaction: '{test txn}', liveOrder: '{live order}', testEndpoint: '{test endpoint}', testEvent: '{event}' })} as ${c.who}`, c] as const))(
    '%s',
    async (_name, { endpoint, who, want }) => {
      const key = callers[who];
      const body = endpoint.body?.(target);
      const res = await api(system.apiUrl, endpoint.method, endpoint.path(target), {
        ...(key === undefined ? {} : { key }),
        ...(body === undefined ? {} : { body }),
      });

      if (want === 'allowed') {
        expect([401, 403, 404, 429, 500]).not.toContain(res.status);
      } else {
        expect(res.status).toBe(want);
        expect(res.body.error.type).toBe({ 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error' }[want]);
      }
      const mayRead = want === 'allowed' && (endpoint.owner === 'list' ? who === 'test key' || who === 'read-only key' || who === 'live key' : true);
      if (!mayRead) expect(JSON.stringify(res.body)).not.toContain(MARKER);
    },
  );
});

describe('rate limiting', () => {
  test('when a key exceeds its burst, then 429 rate_limited with Retry-After, and other keys are unaffected', async () => {
    const { client } = await system.createMerchant();
    const statuses: number[] = [];
    let limited: { status: number; headers: Headers; body: any } | undefined;
    for (let i = 0; i < 100 && limited === undefined; i++) {
      const res = await client.request('GET', '/v1/settings');
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }

    expect(limited).toBeDefined();
    expect(limited!.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(80);
    const other = await system.createMerchant();
    expect((await other.client.request('GET', '/v1/settings')).status).toBe(200);
  });
});
