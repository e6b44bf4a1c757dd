import { randomUUID } from 'node:crypto';
import { MerchantClient, TestSystem, adapterCredentials, adapterHeaders, api } from '@pmatch/testkit';
import { errorBodyProblem } from './support/hostile-input';

/**
 * Every /v1 endpoint × every kind of caller, on live objects as well as test ones: each cell gets
 * exactly the status docs/guide.md gives it, and no answer carries an object its caller may
 * not see. Live objects come the way they do in production: a live transaction from a signed bank
 * notification, live events from live orders and deposits, a live webhook endpoint.
 */

let system: TestSystem;
/** In every test object of organisation A (names, URLs): what only A's test-mode callers may see. */
const TEST_MARKER = 'ZZ-A-TEST-PRIVATE';
/** In every live object of organisation A on account A1: what only A's unscoped live key may see. */
const LIVE_MARKER = 'ZZ-A-LIVE-PRIVATE';

const CALLERS = [
  'no key',
  'garbage key',
  'revoked key',
  'read-only key',
  'test key',
  'live key',
  'live key scoped to another account',
  'key of another organisation',
] as const;
type Who = (typeof CALLERS)[number];
const keys: Partial<Record<Who, string>> = {};

type Mode = 'test' | 'live';
/** The objects of one mode, each used by at most one allowed call, so every allowed answer is known in advance. */
interface Objects {
  order: string;
  canceledOrder: string;
  markedOrder: string;
  paidOrder: string;
  matchOrder: string;
  heldDeposit: string;
  unmatchedDeposit: string;
  excludedDeposit: string;
  endpoint: string;
  deletedEndpoint: string;
  event: string;
  link: string;
  deactivatedLink: string;
}
const objects = {} as Record<Mode, Objects>;
let accountA1: string;
let otherOrgEvent: string;

let nextAmount = 61_000;
const amount = () => (nextAmount += 1);

beforeAll(async () => {
  system = await TestSystem.start({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '150', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' });
  const a = await system.createMerchant({ name: 'Tenant A' });
  const add = (number: string, holder: string) => system.addLiveBankAccount(a.orgId, { number, holder });
  accountA1 = String((await add('4000001', LIVE_MARKER)).id);
  const accountA2 = String((await add('4000002', 'ｴｰﾂｰ')).id);
  const issue = async (...args: string[]) => String((await system.ops('key', 'issue', '--org', a.orgId, '--name', 'k', ...args)).key);
  const revoked = await system.ops('key', 'issue', '--org', a.orgId, '--mode', 'test', '--name', 'revoked');
  await system.ops('key', 'revoke', '--key', String(revoked.id));
  const b = await system.createMerchant({ name: 'Tenant B' });

  keys['garbage key'] = `svc_test_${'0'.repeat(32)}`;
  keys['revoked key'] = String(revoked.key);
  keys['read-only key'] = await issue('--mode', 'test', '--permission', 'read_only');
  keys['test key'] = a.testKey;
  keys['live key'] = await issue('--mode', 'live');
  keys['live key scoped to another account'] = await issue('--mode', 'live', '--bank-account', accountA2);
  keys['key of another organisation'] = b.testKey;

  const adapter = adapterCredentials(await system.ops('adapter', 'create', '--name', 'matrix-bank', '--bank-account', accountA1));
  /** A live deposit as a bank reports it: a signed notification to bank-ingest, then the matcher's decision. */
  const notify = async (value: number, counterparty: string): Promise<string> => {
    const body = JSON.stringify({
      bank_account_id: accountA1,
      bank_reference: randomUUID(),
      direction: 'deposit',
      amount: value,
      counterparty,
      occurred_at: new Date().toISOString(),
    });
    const res = await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
      rawBody: body,
      headers: { 'content-type': 'application/json', ...adapterHeaders(adapter, body) },
    });
    if (res.status !== 202) throw new Error(`notification not stored: ${res.status} ${JSON.stringify(res.body)}`);
    const transactionId = res.body.transaction_id as string;
    await system.processed('matcher.deposits', `deposit_${transactionId}`);
    return transactionId;
  };

  for (const mode of ['test', 'live'] as const) {
    const client = new MerchantClient(system.apiUrl, mode === 'test' ? a.testKey : keys['live key']!);
    const marker = mode === 'test' ? TEST_MARKER : LIVE_MARKER;
    const order = (overrides: Record<string, unknown> = {}) =>
      client.createOrder({ amount: amount(), payer_name: marker, item_name: marker, ...(mode === 'live' ? { bank_account_id: accountA1 } : {}), ...overrides });
    const deposit = async (value: number, counterparty: string): Promise<string> =>
      mode === 'test' ? (await client.deposit(value, counterparty)).id : notify(value, counterparty);
    const expectStatus = async (id: string, status: string) => {
      const t = await client.transaction(id);
      if (t.status !== status) throw new Error(`${mode} fixture ${id} is ${t.status}, not ${status}`);
    };

    const paid = await order();
    await expectStatus(await deposit(paid.amount, marker), 'confirmed');
    const matchOrder = await order();
    const heldDeposit = await deposit(matchOrder.amount, `${marker}-OTHER`);
    await expectStatus(heldDeposit, 'held');
    const unmatchedDeposit = await deposit(amount(), marker);
    await expectStatus(unmatchedDeposit, 'unmatched');
    const excludedDeposit = await deposit(amount(), marker);
    expect((await client.request('POST', `/v1/transactions/${excludedDeposit}/exclude`)).status).toBe(200);
    const endpoint = await client.request('POST', '/v1/webhook-endpoints', { url: `https://127.0.0.1:9/${marker}` });
    const deletedEndpoint = await client.request('POST', '/v1/webhook-endpoints', { url: `https://127.0.0.1:9/${marker}/deleted` });
    expect([endpoint.status, deletedEndpoint.status]).toEqual([201, 201]);
    const first = await order();
    const link = () =>
      client.request('POST', '/v1/payment-links', { amount: amount(), item_name: marker, ...(mode === 'live' ? { bank_account_id: accountA1 } : {}) });
    const [paymentLink, deactivatedLink] = [await link(), await link()];
    expect([paymentLink.status, deactivatedLink.status]).toEqual([201, 201]);
    objects[mode] = {
      order: first.id,
      canceledOrder: (await order()).id,
      markedOrder: (await order()).id,
      paidOrder: paid.id,
      matchOrder: matchOrder.id,
      heldDeposit,
      unmatchedDeposit,
      excludedDeposit,
      endpoint: endpoint.body.id,
      deletedEndpoint: deletedEndpoint.body.id,
      event: (await client.events('order.created')).find((e) => e.data.object.id === first.id).id,
      link: paymentLink.body.id,
      deactivatedLink: deactivatedLink.body.id,
    };
  }
  await b.client.createOrder();
  otherOrgEvent = (await b.client.events())[0].id;
}, 300_000);

afterAll(async () => {
  await system?.stop();
});

interface Endpoint {
  method: string;
  path: (o: Objects) => string;
  body?: (o: Objects, who: Who) => unknown;
  /** Whose object the path names: a test or a live object of organisation A (live ones on account A1), or none (lists, creations). */
  object: Mode | 'none';
  /** The answer to a caller who may use the endpoint (on an object: its owner; the read-only key, for reads of test objects). */
  allowed: number | ((who: Who) => number);
  /** Managing webhook endpoints: refused to a key scoped to one bank account. */
  webhooks?: true;
  /** A signing secret: a credential, so a read-write key's only. */
  secret?: true;
  /** PATCH /v1/settings: an organisation-wide change, refused to a key scoped to one bank account. */
  settingsWrite?: true;
  /** What a caller who may not see the object gets: 404, or 400 for an id given as a list cursor. */
  unseen?: 400;
}

const WRITES = new Set(['POST', 'PATCH', 'DELETE']);

/** Creations of a caller's own: a live key names its account (it has two), a scoped key may leave it out (it has one). */
const newOrder = (_o: Objects, who: Who) => ({
  amount: 7,
  payer_name: 'x',
  external_id: randomUUID(),
  item_name: 'x',
  ...(who === 'live key' ? { bank_account_id: accountA1 } : {}),
});

const ENDPOINTS: Endpoint[] = (['test', 'live'] as const)
  .flatMap((mode): Endpoint[] => [
    { method: 'GET', path: (o) => `/v1/orders/${o.order}`, object: mode, allowed: 200 },
    { method: 'PATCH', path: (o) => `/v1/orders/${o.order}`, body: () => ({ metadata: { k: 'v' } }), object: mode, allowed: 200 },
    { method: 'POST', path: (o) => `/v1/orders/${o.canceledOrder}/cancel`, object: mode, allowed: 200 },
    { method: 'POST', path: (o) => `/v1/orders/${o.markedOrder}/mark-paid`, body: () => ({}), object: mode, allowed: 200 },
    { method: 'POST', path: (o) => `/v1/orders/${o.paidOrder}/reverse`, object: mode, allowed: 200 },
    { method: 'GET', path: (o) => `/v1/transactions/${o.heldDeposit}`, object: mode, allowed: 200 },
    { method: 'POST', path: (o) => `/v1/transactions/${o.heldDeposit}/match`, body: (o) => ({ order_id: o.matchOrder }), object: mode, allowed: 200 },
    { method: 'POST', path: (o) => `/v1/transactions/${o.unmatchedDeposit}/exclude`, object: mode, allowed: 200 },
    { method: 'POST', path: (o) => `/v1/transactions/${o.excludedDeposit}/restore`, object: mode, allowed: 200 },
    { method: 'GET', path: (o) => `/v1/events?starting_after=${o.event}`, object: mode, allowed: 200, unseen: 400 },
    { method: 'GET', path: (o) => `/v1/orders?starting_after=${o.order}`, object: mode, allowed: 200, unseen: 400 },
    { method: 'GET', path: (o) => `/v1/transactions?starting_after=${o.heldDeposit}`, object: mode, allowed: 200, unseen: 400 },
    { method: 'GET', path: (o) => `/v1/webhook-endpoints/${o.endpoint}`, object: mode, allowed: 200, webhooks: true },
    { method: 'PATCH', path: (o) => `/v1/webhook-endpoints/${o.endpoint}`, body: () => ({ enabled: true }), object: mode, allowed: 200, webhooks: true },
    { method: 'GET', path: (o) => `/v1/webhook-endpoints/${o.endpoint}/secret`, object: mode, allowed: 200, webhooks: true, secret: true },
    { method: 'POST', path: (o) => `/v1/webhook-endpoints/${o.endpoint}/rotate-secret`, object: mode, allowed: 200, webhooks: true },
    { method: 'POST', path: (o) => `/v1/webhook-endpoints/${o.endpoint}/test`, object: mode, allowed: 202, webhooks: true },
    { method: 'GET', path: (o) => `/v1/webhook-endpoints/${o.endpoint}/deliveries`, object: mode, allowed: 200, webhooks: true },
    {
      method: 'POST',
      path: (o) => `/v1/webhook-endpoints/${o.endpoint}/deliveries/resend`,
      body: (o) => ({ event_id: o.event }),
      object: mode,
      allowed: 202,
      webhooks: true,
    },
    { method: 'DELETE', path: (o) => `/v1/webhook-endpoints/${o.deletedEndpoint}`, object: mode, allowed: 200, webhooks: true },
    { method: 'GET', path: (o) => `/v1/payment-links/${o.link}`, object: mode, allowed: 200 },
    { method: 'POST', path: (o) => `/v1/payment-links/${o.deactivatedLink}/deactivate`, object: mode, allowed: 200 },
    { method: 'GET', path: (o) => `/v1/payment-links?starting_after=${o.link}`, object: mode, allowed: 200, unseen: 400 },
  ])
  .concat([
    { method: 'GET', path: () => '/v1/orders', object: 'none', allowed: 200 },
    { method: 'GET', path: () => '/v1/transactions', object: 'none', allowed: 200 },
    { method: 'GET', path: () => '/v1/events', object: 'none', allowed: 200 },
    { method: 'GET', path: () => '/v1/bank-accounts', object: 'none', allowed: 200 },
    { method: 'GET', path: () => '/v1/settings', object: 'none', allowed: 200 },
    { method: 'PATCH', path: () => '/v1/settings', body: () => ({ auto_confirm_late_orders: false }), object: 'none', allowed: 200, settingsWrite: true },
    { method: 'POST', path: () => '/v1/orders', body: newOrder, object: 'none', allowed: 201 },
    { method: 'GET', path: () => '/v1/payment-links', object: 'none', allowed: 200 },
    {
      method: 'POST',
      path: () => '/v1/payment-links',
      body: (_o, who) => ({ amount: 7, item_name: 'x', ...(who === 'live key' ? { bank_account_id: accountA1 } : {}) }),
      object: 'none',
      allowed: 201,
    },
    // Test deposits are for test keys; a live key gets 404.
    {
      method: 'POST',
      path: () => '/v1/test/deposits',
      body: () => ({ amount: 6999, counterparty: 'x' }),
      object: 'none',
      allowed: (who) => (who.startsWith('live') ? 404 : 201),
    },
    { method: 'GET', path: () => '/v1/webhook-endpoints', object: 'none', allowed: 200, webhooks: true },
    { method: 'POST', path: () => '/v1/webhook-endpoints', body: () => ({ url: 'https://127.0.0.1:9/other' }), object: 'none', allowed: 201, webhooks: true },
    // An event of another organisation is no event of the caller's.
    {
      method: 'GET',
      path: () => `/v1/events?starting_after=${otherOrgEvent}`,
      object: 'none',
      allowed: (who) => (who === 'key of another organisation' ? 200 : 400),
    },
  ]);

/** The answer of docs/guide.md "Authentication and modes", scoped keys included, for one caller. */
function expected(endpoint: Endpoint, who: Who): number {
  if (who === 'no key' || who === 'garbage key' || who === 'revoked key') return 401;
  if (who === 'read-only key' && (WRITES.has(endpoint.method) || endpoint.secret)) return 403;
  // A key limited to one bank account manages nothing organisation-wide: webhook endpoints, settings.
  if (who === 'live key scoped to another account' && (endpoint.webhooks || endpoint.settingsWrite)) return 403;
  const unseen = endpoint.unseen ?? 404;
  const allowed = typeof endpoint.allowed === 'number' ? endpoint.allowed : endpoint.allowed(who);
  switch (endpoint.object) {
    case 'none':
      return allowed;
    case 'test':
      return who === 'test key' || who === 'read-only key' ? allowed : unseen;
    case 'live':
      // Every live object of A is on account A1; the scoped key has only A2.
      return who === 'live key' ? allowed : unseen;
  }
}

/** Which markers a caller may see: its own mode's objects of A, and for the scoped key none of A1's. */
function mayRead(who: Who): string[] {
  if (who === 'test key' || who === 'read-only key') return [TEST_MARKER];
  if (who === 'live key') return [LIVE_MARKER];
  return [];
}

const ERROR_TYPE: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error' };
const describePath = (e: Endpoint) =>
  e
    .path({
      order: '{order}',
      canceledOrder: '{open order}',
      markedOrder: '{open order}',
      paidOrder: '{paid order}',
      matchOrder: '{order}',
      heldDeposit: '{held deposit}',
      unmatchedDeposit: '{unmatched deposit}',
      excludedDeposit: '{excluded deposit}',
      endpoint: '{endpoint}',
      deletedEndpoint: '{endpoint}',
      event: '{event}',
      link: '{link}',
      deactivatedLink: '{link}',
    })
    .replace(/starting_after=undefined/, "starting_after={other organisation's event}");

describe('access matrix', () => {
  // Allowed calls change state, so every refused call runs first, against untouched objects; each
  // allowed call has an object of its own, so its answer does not depend on the order of the rest.
  const cells = ENDPOINTS.flatMap((endpoint) => CALLERS.map((who) => ({ endpoint, who, want: expected(endpoint, who) })));
  const refusedFirst = [...cells.filter((c) => c.want >= 400), ...cells.filter((c) => c.want < 400)];

  test.each(refusedFirst.map((c) => [`${c.endpoint.method} ${describePath(c.endpoint)} (${c.endpoint.object}) as ${c.who} → ${c.want}`, c] as const))(
    '%s',
    async (_name, { endpoint, who, want }) => {
      const o = objects[endpoint.object === 'live' ? 'live' : 'test'];
      const key = keys[who];
      const body = endpoint.body?.(o, who);
      const res = await api(system.apiUrl, endpoint.method, endpoint.path(o), {
        ...(key === undefined ? {} : { key }),
        ...(body === undefined ? {} : { body }),
      });

      expect({ status: res.status, body: res.status === want ? undefined : res.body }).toEqual({ status: want, body: undefined });
      if (want >= 400) {
        expect(errorBodyProblem(res)).toBeUndefined();
        expect(res.body.error.type).toBe(ERROR_TYPE[want]);
      }
      const text = JSON.stringify(res.body);
      for (const marker of [TEST_MARKER, LIVE_MARKER].filter((m) => !mayRead(who).includes(m))) expect(text).not.toContain(marker);
      expect([...res.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
    },
  );
});

describe('outside the matrix', () => {
  test.each(CALLERS)('when /v1/openapi.json is asked for as %s, then 200: the document is public by design and holds nothing of a merchant', async (who) => {
    const key = keys[who];
    const res = await api(system.apiUrl, 'GET', '/v1/openapi.json', key === undefined ? {} : { key });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(JSON.stringify(res.body)).not.toMatch(/ZZ-A-|svc_(test|live)_[0-9A-Za-z]{32}/);
  });

  test('when a browser sends a CORS preflight to /v1, then it gets no CORS headers (docs/guide.md "Authentication and modes")', async () => {
    const res = await fetch(`${system.apiUrl}/v1/orders`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    // A preflight carries no key, so it is refused like any request without one.
    expect(res.status).toBe(401);
    expect([...res.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });
});

describe('rate limiting', () => {
  test('when a key exceeds its burst, then 429 rate_limited with Retry-After, and other keys are unaffected', async () => {
    const { client } = await system.createMerchant();
    const statuses: number[] = [];
    let limited: { status: number; headers: Headers; body: any } | undefined;
    for (let i = 0; i < 300 && limited === undefined; i++) {
      const res = await client.request('GET', '/v1/settings');
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }

    expect(limited).toBeDefined();
    expect(limited!.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The burst of 150, and the few refills of 1 a second while they were sent.
    const allowed = statuses.filter((s) => s === 200).length;
    expect(allowed).toBeGreaterThanOrEqual(150);
    expect(allowed).toBeLessThan(200);
    const other = await system.createMerchant();
    expect((await other.client.request('GET', '/v1/settings')).status).toBe(200);
  });
});
