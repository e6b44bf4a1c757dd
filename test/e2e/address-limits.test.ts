import { request } from 'node:http';
import { TestSystem, freePort } from '@pmatch/testkit';

/**
 * Limits per client address in front of what answers without an API key: /v1 with unknown keys,
 * unknown payment pages, unsigned bank-ingest requests, the console. Client addresses are loopback
 * aliases (Linux answers on all of 127.0.0.0/8); TRUST_PROXY is off, as by default. With Redis
 * unreachable, each process keeps the limits by itself.
 */

/** After 5, one more allowed every 100 s: none comes back during a test. */
const LIMITS = { REFUSAL_LIMIT_PER_SECOND: '0.01', REFUSAL_LIMIT_BURST: '5', CONSOLE_LIMIT_PER_SECOND: '0.01', CONSOLE_LIMIT_BURST: '5' };
const BURST = 5;

let system: TestSystem;
let validKey: string;

beforeAll(async () => {
  system = await TestSystem.start(LIMITS);
  validKey = (await system.createMerchant()).testKey;
});

afterAll(async () => {
  await system?.stop();
});

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** One request on a new connection from the address `from`. */
function send(url: string, from: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {}, localAddress: from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Sends `count` requests one after another; resolves with their statuses. */
async function flood(count: number, one: () => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < count; i += 1) answers.push(await one());
  return answers;
}

/**
 * The flood was answered as usual while its address had allowance (each refusal is counted as it
 * is answered), then refused 429 with Retry-After and the error body to the end.
 */
function expectRefusedPastTheLimit(answers: Answer[], refusal: number): void {
  expect(answers.slice(0, BURST).map((a) => a.status)).toEqual(Array(BURST).fill(refusal));
  for (const refused of answers.slice(BURST)) {
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limited' } });
  }
}

const unknownKey = { authorization: 'Bearer svc_test_unknownunknownunknownunknown' };
const unsigned = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ bank_reference: 'r', amount: 1 }) };
const badlySigned = {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    'webhook-id': 'msg_x',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': 'v1,AAAA',
  },
  body: JSON.stringify({ bank_reference: 'r', amount: 1 }),
};

describe('with Redis', () => {
  test('when one address floods /v1 with an unknown key, then it is answered 429 past its limit, even with a valid key, while another address is served', async () => {
    const answers = await flood(20, () => send(`${system.apiUrl}/v1/orders`, '127.0.0.2', { headers: unknownKey }));

    expectRefusedPastTheLimit(answers, 401);
    expect((await send(`${system.apiUrl}/v1/orders`, '127.0.0.2', { headers: { authorization: `Bearer ${validKey}` } })).status).toBe(429);
    expect((await send(`${system.apiUrl}/v1/orders`, '127.0.0.3', { headers: unknownKey })).status).toBe(401);
    expect((await send(`${system.apiUrl}/v1/orders`, '127.0.0.3', { headers: { authorization: `Bearer ${validKey}` } })).status).toBe(200);
  });

  test('when one address asks for unknown payment pages, then it is answered 429 past its limit while another address is served', async () => {
    const answers = await flood(20, () => send(`${system.apiUrl}/pay/${'x'.repeat(32)}`, '127.0.0.4'));

    expectRefusedPastTheLimit(answers, 404);
    expect((await send(`${system.apiUrl}/pay/${'y'.repeat(32)}`, '127.0.0.5')).status).toBe(404);
  });

  test('when one address floods bank-ingest with unsigned or badly signed bodies, then it is answered 429 past its limit while another address is served', async () => {
    const notifications = `${system.url('bank-ingest')}/ingest/v1/notifications`;
    const answers = await flood(10, () => send(notifications, '127.0.0.6', unsigned));
    const statements = `${system.url('bank-ingest')}/ingest/v1/statements`;
    answers.push(...(await flood(10, () => send(statements, '127.0.0.6', badlySigned))));

    expectRefusedPastTheLimit(answers, 401);
    expect((await send(notifications, '127.0.0.7', badlySigned)).status).toBe(401);
  });

  test('when one address floods the console, then it is answered 429 past its limit while another address is served', async () => {
    const answers = await flood(10, () => send(`${system.apiUrl}/dashboard/login`, '127.0.0.8'));

    expect(answers.map((a) => a.status)).toEqual([...Array(BURST).fill(200), ...Array(10 - BURST).fill(429)]);
    expect((await send(`${system.apiUrl}/dashboard/login`, '127.0.0.9')).status).toBe(200);
  });

  test('when a flooding client sends X-Forwarded-For (not trusted by default), then it stays the address it connects from', async () => {
    const answers = await flood(20, () =>
      send(`${system.apiUrl}/v1/orders`, '127.0.0.10', { headers: { ...unknownKey, 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 250)}` } }),
    );
    expectRefusedPastTheLimit(answers, 401);
  });
});

describe('with Redis unreachable', () => {
  beforeAll(async () => {
    // Nothing listens there: every Redis command of the two services fails at once.
    system.env.REDIS_URL = `redis://127.0.0.1:${await freePort()}`;
    for (const service of ['orders-api', 'bank-ingest'] as const) {
      await system.terminate(service);
      await system.startService(service);
    }
  });

  test('when one address floods /v1, payment pages or bank-ingest, then each process still answers 429 past the limit, and another address is served', async () => {
    expectRefusedPastTheLimit(await flood(20, () => send(`${system.apiUrl}/v1/orders`, '127.0.0.11', { headers: unknownKey })), 401);
    expectRefusedPastTheLimit(await flood(20, () => send(`${system.apiUrl}/pay/${'x'.repeat(32)}`, '127.0.0.11')), 404);
    expectRefusedPastTheLimit(await flood(20, () => send(`${system.url('bank-ingest')}/ingest/v1/notifications`, '127.0.0.11', unsigned)), 401);

    expect((await send(`${system.apiUrl}/v1/orders`, '127.0.0.12', { headers: { authorization: `Bearer ${validKey}` } })).status).toBe(200);
    expect((await send(`${system.url('bank-ingest')}/ingest/v1/notifications`, '127.0.0.12', unsigned)).status).toBe(401);
    expect(system.logs('orders-api')).toContain('each process keeps the rate limits by itself');
  });
});
