import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { BankNotification } from '@pmatch/contracts';
import { MerchantClient, TestSystem, api } from '@pmatch/testkit';
import { FUZZ_RUNS as RUNS, expectWellFormed, jsonValue, weirdNumber, weirdString } from './support/hostile-input';

/**
 * Hostile input on the webhook-endpoint API and on bank-ingest (fuzz.test.ts has orders,
 * transactions, settings and test deposits): never a 5xx, every error in the DESIGN body, and a
 * refused request stores nothing. Bank notifications are signed with a real adapter secret, so
 * the bodies get past authentication to the parser.
 */

jest.setTimeout(600_000);
let system: TestSystem;
let client: MerchantClient;
let endpointId: string;
let bankAccountId: string;
let adapterSecret: string;

beforeAll(async () => {
  system = await TestSystem.start({
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
    LOG_LEVEL: 'error',
    // Endpoint URLs on loopback pass the address check; port 1 refuses every delivery at once.
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
  });
  const merchant = await system.createMerchant();
  client = merchant.client;
  // Subscribed to an event these tests never cause (there are no orders), so deliveries come only from the fuzzed requests.
  const endpoint = await client.request('POST', '/v1/webhook-endpoints', { url: 'https://127.0.0.1:1/hooks', enabled_events: ['order.paid'] });
  if (endpoint.status !== 201) throw new Error(`endpoint not created: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
  endpointId = endpoint.body.id;
  // Banks notify only live accounts.
  const account = await system.ops('bank-account', 'add', '--org', merchant.orgId, '--mode', 'live', '--bank-code', '0001', '--branch-code', '001',
    '--account-number', '3000001', '--holder-name', 'ｼｮｳﾃﾝ');
  bankAccountId = String(account.id);
  adapterSecret = String((await system.ops('adapter', 'create', '--name', 'fuzz-bank')).secret);
}, 120_000);

afterAll(async () => {
  await system?.stop();
});

const stored = async () =>
  (await system.sql<{ endpoints: number; transactions: number; deliveries: number }>(
    `SELECT (SELECT count(*)::int FROM webhook_endpoints) AS endpoints, (SELECT count(*)::int FROM transactions) AS transactions,
            (SELECT count(*)::int FROM webhook_deliveries) AS deliveries`,
  ))[0]!;

const url = fc.oneof(
  weirdString,
  fc.constantFrom(
    'https://127.0.0.1:1/other',
    'http://127.0.0.1/plain-http',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/',
    'https://localhost/',
    'https://10.0.0.1/',
    'https://user:pass@127.0.0.1/',
    'https://example.invalid/',
    'ftp://127.0.0.1/',
    'https://127.0.0.1:99999/',
    `https://${'a'.repeat(300)}.example/`,
  ),
);
const events = fc.oneof(fc.array(fc.oneof(weirdString, fc.constantFrom('*', 'order.paid', 'transaction.held', 'order.created')), { maxLength: 12 }), weirdString);
const nearlyValidEndpoint = fc.record({ url, enabled_events: events, enabled: fc.oneof(fc.boolean(), weirdString, weirdNumber) }, { requiredKeys: [] });

const ROUTES: { name: string; method: string; path: () => string }[] = [
  { name: 'POST /v1/webhook-endpoints', method: 'POST', path: () => '/v1/webhook-endpoints' },
  { name: 'PATCH /v1/webhook-endpoints/{id}', method: 'PATCH', path: () => `/v1/webhook-endpoints/${endpointId}` },
  { name: 'POST /v1/webhook-endpoints/{id}/rotate-secret', method: 'POST', path: () => `/v1/webhook-endpoints/${endpointId}/rotate-secret` },
  { name: 'POST /v1/webhook-endpoints/{id}/test', method: 'POST', path: () => `/v1/webhook-endpoints/${endpointId}/test` },
  { name: 'POST /v1/webhook-endpoints/{id}/deliveries/resend', method: 'POST', path: () => `/v1/webhook-endpoints/${endpointId}/deliveries/resend` },
];

describe('fuzzing webhook endpoints', () => {
  test.each(ROUTES.map((r) => [r.name, r] as const))(
    'when %s gets arbitrary JSON bodies, then never a 5xx',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(jsonValue, nearlyValidEndpoint), async (body) => {
          const res = await client.request(route.method, route.path(), body);
          expectWellFormed(res, body);
        }),
        { numRuns: RUNS },
      );
    },
  );

  test('when the deliveries list gets arbitrary query strings and path ids are arbitrary, then 200, 400 or 404, never 5xx', async () => {
    const query = fc.dictionary(fc.oneof(weirdString, fc.constantFrom('limit', 'starting_after', 'status')), fc.oneof(weirdString, weirdNumber.map(String)), { maxKeys: 4 });
    const id = fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }), fc.constantFrom('..', '%ZZ', 'we_', `${endpointId}x`));
    await fc.assert(
      fc.asyncProperty(query, id, fc.boolean(), async (params, raw, ownId) => {
        const search = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
        const path = `/v1/webhook-endpoints/${ownId ? endpointId : encodeURIComponent(raw)}/deliveries?${search}`;
        const res = await client.request('GET', path);
        expectWellFormed(res, { params, raw, ownId });
        expect([200, 400, 404]).toContain(res.status);
      }),
      { numRuns: RUNS },
    );
  });

  test('when endpoints are created from arbitrary bodies, then at most the limit exists, each with a vetted https URL', async () => {
    const rows = await system.sql<{ url: string }>('SELECT url FROM webhook_endpoints');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThanOrEqual(5);
    // Only loopback is allowed here, and only over https.
    for (const row of rows) expect(row.url).toMatch(/^https:\/\/127\.\d+\.\d+\.\d+(:\d+)?\//);
  });
});

describe('fuzzing bank-ingest', () => {
  // Each field is valid three times in four, so about a sixth of these are whole valid notifications.
  const mostly = <T, U>(valid: fc.Arbitrary<T>, bent: fc.Arbitrary<U>) => fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: bent, weight: 1 });
  const nearlyValidNotification = fc.record({
    bank_account_id: mostly(fc.constant('OWN'), weirdString),
    bank_reference: mostly(fc.uuid(), weirdString),
    direction: mostly(fc.constantFrom('deposit', 'withdrawal'), weirdString),
    amount: mostly(fc.integer({ min: 1, max: 9_999_999_999 }), fc.oneof(weirdNumber, weirdString)),
    counterparty: mostly(fc.constantFrom('ﾔﾏﾀﾞ ﾀﾛｳ', 'ｶ)ﾃｽﾄ'), weirdString),
    occurred_at: mostly(fc.date({ noInvalidDate: true, min: new Date('2020-01-01'), max: new Date('2026-01-01') }).map((d) => d.toISOString()), weirdString),
  });

  const push = (rawBody: string) => {
    const id = `msg_${randomUUID()}`;
    const timestamp = new Date();
    return api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
      rawBody,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': new Webhook(adapterSecret).sign(id, timestamp, rawBody),
      },
    });
  };

  test('when signed notifications carry arbitrary bodies, then never a 5xx, and only a valid notification is stored', async () => {
    const before = await stored();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(jsonValue, nearlyValidNotification), async (generated) => {
        const body = isRecord(generated) && generated.bank_account_id === 'OWN' ? { ...generated, bank_account_id: bankAccountId } : generated;
        const res = await push(JSON.stringify(body));
        expectWellFormed(res, body);
        if (res.status < 300) {
          expect(BankNotification.safeParse(body).success).toBe(true);
          // A bank reference seen before (the fixed hostile strings repeat) is a duplicate: 200, nothing stored.
          expect(res.body.duplicate).toBe(res.status === 200);
          if (res.status === 202) accepted++;
        } else {
          expect(res.status).toBeGreaterThanOrEqual(400);
        }
      }),
      { numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(0);
    expect((await stored()).transactions).toBe(before.transactions + accepted);
  });

  test('when notification bytes are not JSON or deeply nested, then 4xx and nothing stored', async () => {
    const before = await stored();
    const rawBody = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
      fc.constantFrom('{"amount":1e400}', '{"amount": 1,}', '\ufeff{}', '{"counterparty":"\\ud800"}', 'null', '[]'),
    );
    await fc.assert(
      fc.asyncProperty(rawBody, async (text) => {
        const res = await push(text);
        expectWellFormed(res, text);
        expect(res.status).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: RUNS },
    );
    expect((await stored()).transactions).toBe(before.transactions);
  });
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
