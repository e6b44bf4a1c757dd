import fc from 'fast-check';
import { ErrorBody } from '@pmatch/contracts';
import { MerchantClient, TestSystem, api } from '@pmatch/testkit';
import { FUZZ_RUNS as RUNS, expectWellFormed, jsonValue, weirdNumber, weirdString } from './support/hostile-input';

/**
 * Hostile input on every endpoint: bodies, query strings, headers and path ids from fast-check.
 * Whatever arrives, the answer is never a 5xx, every error has the DESIGN body, and a refused
 * request stores nothing. FUZZ_RUNS sets the cases per property (CI runs the default). Webhook
 * endpoints and bank notifications are fuzzed in fuzz-webhooks-and-ingest.test.ts.
 */

// Thousands of requests per property on a shared 2-core machine: time is measured in minutes here.
jest.setTimeout(600_000);
let system: TestSystem;
let client: MerchantClient;
let orderId: string;
let transactionId: string;

beforeAll(async () => {
  system = await TestSystem.start({ RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', LOG_LEVEL: 'error' });
  ({ client } = await system.createMerchant());
  orderId = (await client.createOrder({ amount: 7100 })).id;
  transactionId = (await client.deposit(7200)).id;
}, 120_000);

afterAll(async () => {
  await system?.stop();
});

const counts = async () =>
  (await system.sql<{ orders: number; transactions: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM transactions) AS transactions,
            (SELECT count(*)::int FROM events) AS events`,
  ))[0]!;

/** Bodies close to valid ones, with one field bent: the cases most likely to slip past a check. */
const nearlyValidOrder = fc.record({
  amount: fc.oneof(weirdNumber, weirdString),
  payer_name: fc.oneof(weirdString, weirdNumber),
  external_id: fc.oneof(weirdString, fc.constant(undefined)),
  item_name: weirdString,
  metadata: fc.oneof(fc.constant(undefined), jsonValue),
  ordered_at: fc.oneof(fc.constant(undefined), weirdString, fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
});

const ROUTES: { name: string; method: string; path: () => string }[] = [
  { name: 'POST /v1/orders', method: 'POST', path: () => '/v1/orders' },
  { name: 'PATCH /v1/orders/{id}', method: 'PATCH', path: () => `/v1/orders/${orderId}` },
  { name: 'POST /v1/orders/{id}/cancel', method: 'POST', path: () => `/v1/orders/${orderId}/cancel` },
  { name: 'POST /v1/orders/{id}/reverse', method: 'POST', path: () => `/v1/orders/${orderId}/reverse` },
  { name: 'POST /v1/orders/{id}/mark-paid', method: 'POST', path: () => `/v1/orders/${orderId}/mark-paid` },
  { name: 'POST /v1/transactions/{id}/match', method: 'POST', path: () => `/v1/transactions/${transactionId}/match` },
  { name: 'POST /v1/transactions/{id}/exclude', method: 'POST', path: () => `/v1/transactions/${transactionId}/exclude` },
  { name: 'POST /v1/transactions/{id}/restore', method: 'POST', path: () => `/v1/transactions/${transactionId}/restore` },
  { name: 'PATCH /v1/settings', method: 'PATCH', path: () => '/v1/settings' },
  { name: 'POST /v1/test/deposits', method: 'POST', path: () => '/v1/test/deposits' },
];

describe('fuzzing', () => {
  test.each(ROUTES.map((r) => [r.name, r] as const))(
    'when %s gets arbitrary JSON bodies, then never a 5xx',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(jsonValue, nearlyValidOrder), async (body) => {
          const res = await client.request(route.method, route.path(), body);
          expectWellFormed(res, body);
        }),
        { numRuns: RUNS },
      );
    },
  );

  test('when raw bodies are not JSON, deeply nested or oddly typed, then 4xx and nothing stored', async () => {
    const before = await counts();
    const rawBody = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
      fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
      fc.constantFrom('{"amount":1e400}', '{"amount":NaN}', '{"amount": 1,}', '\ufeff{}', '{"a":"\\ud800"}'),
    );
    await fc.assert(
      fc.asyncProperty(rawBody, fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'), async (text, type) => {
        const res = await api(system.apiUrl, 'POST', '/v1/orders', { key: client.key, rawBody: text, headers: { 'content-type': type } });
        expectWellFormed(res, text);
        expect(res.status).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: RUNS },
    );
    expect(await counts()).toEqual(before);
  });

  test('when query strings are arbitrary, then list endpoints answer 200 or 400, never 5xx', async () => {
    const query = fc.dictionary(fc.oneof(weirdString, fc.constantFrom('limit', 'starting_after', 'status', 'type', 'external_id')), fc.oneof(weirdString, weirdNumber.map(String)), { maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v1/orders', '/v1/transactions', '/v1/events'), query, async (path, params) => {
        const search = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
        const res = await client.request('GET', `${path}?${search}`);
        expectWellFormed(res, params);
        expect([200, 400]).toContain(res.status);
      }),
      { numRuns: RUNS },
    );
  });

  test('when path ids are arbitrary, then 404 (or 400 for an unreadable URL), never 5xx', async () => {
    // At least one character: an empty id is the list itself (/v1/orders/ is /v1/orders).
    const id = fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }), fc.constantFrom('..', '%', '%ZZ', '%00', 'ord_', `${orderId}x`, orderId.toUpperCase()));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v1/orders/', '/v1/transactions/', '/v1/webhook-endpoints/'), id, async (prefix, raw) => {
        const res = await client.request('GET', `${prefix}${encodeURIComponent(raw).replace(/%25/g, raw.includes('%') ? '%' : '%25')}`);
        expectWellFormed(res, raw);
        expect([400, 404]).toContain(res.status);
      }),
      { numRuns: RUNS },
    );
  });

  test('when payment page tokens are arbitrary, then the not-found page (or 400 for an unreadable URL), never 5xx', async () => {
    const token = fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }), fc.constantFrom('..', '%ZZ', '%00', '0'.repeat(32), 'x'.repeat(5000)));
    await fc.assert(
      fc.asyncProperty(token, async (raw) => {
        const res = await fetch(`${system.apiUrl}/pay/${encodeURIComponent(raw)}`);
        await res.arrayBuffer();
        if (res.status >= 500) throw new Error(`5xx for ${JSON.stringify(raw)}`);
        expect([400, 404]).toContain(res.status);
      }),
      { numRuns: RUNS },
    );
  });

  test('when headers are arbitrary, then 401 for bad keys and well-formed answers for bad Idempotency-Keys', async () => {
    const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 });
    await fc.assert(
      fc.asyncProperty(headerValue, headerValue, async (authorization, idempotencyKey) => {
        const unauthenticated = await api(system.apiUrl, 'GET', '/v1/orders', { headers: { authorization } });
        expect(unauthenticated.status).toBe(401);
        ErrorBody.parse(unauthenticated.body);
        const res = await client.request('POST', '/v1/orders', { amount: 'x' }, { 'idempotency-key': idempotencyKey });
        expectWellFormed(res, idempotencyKey);
        expect(res.status).toBe(400);
      }),
      { numRuns: RUNS },
    );
  });

  test('when names carry Unicode edge cases and amounts sit at the limits, then orders are created or refused cleanly', async () => {
    const name = fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 110 }), weirdString);
    const amount = fc.constantFrom(0, 1, 2, 9_999_999_998, 9_999_999_999, 10_000_000_000, -1, 1.5);
    let created = 0;
    const before = await counts();
    await fc.assert(
      fc.asyncProperty(name, amount, fc.uuid(), async (payerName, value, externalId) => {
        const res = await client.request('POST', '/v1/orders', { amount: value, payer_name: payerName, external_id: externalId, item_name: payerName });
        expectWellFormed(res, { payerName, value });
        if (res.status === 201) {
          created++;
          expect(res.body.payer_name).toBe(payerName);
          expect(res.body.amount).toBe(value);
        } else {
          expect(res.status).toBe(400);
        }
      }),
      { numRuns: RUNS },
    );
    expect((await counts()).orders).toBe(before.orders + created);
  });
});
