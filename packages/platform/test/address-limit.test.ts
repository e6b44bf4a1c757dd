import type { Server } from 'node:http';
import { request } from 'node:http';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { REDIS_URL, uniqueName } from '@pmatch/testkit';
import {
  BaseConfig,
  RateLimiter,
  addressGroup,
  addressLimit,
  clientAddress,
  createHttpApp,
  createLogger,
  finishHttpApp,
  limitedRequestsCounter,
  listen,
  loadConfig,
} from '../src';

/**
 * Limits per client address in front of routes (addresses are loopback aliases: Linux answers on
 * all of 127.0.0.0/8), and which address counts: the connection's, or X-Forwarded-For's where
 * TRUST_PROXY says so.
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(port: number, path: string, options: { from?: string; headers?: Record<string, string>; method?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        localAddress: options.from ?? '127.0.0.1',
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

let redis: Redis;
let server: Server;
let port: number;
const handled = { count: 0 };

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const logger = createLogger('address-limit-test', 'silent');
  const metrics = new Registry();
  const limited = limitedRequestsCounter(metrics);
  const app = createHttpApp({ logger, metrics });
  // One token per 100 s after the burst: none refills during the test.
  const limiter = new RateLimiter(redis, uniqueName('pmatch-test:'), 0.01, 3);
  app.use('/refusals', addressLimit({ name: 'refusals', limiter, counts: [404], message: 'too many', limited }));
  app.get('/refusals/:thing', (req, res) => {
    handled.count += 1;
    res.status(req.params.thing === 'known' ? 200 : 404).json({});
  });
  app.use('/every', addressLimit({ name: 'every', limiter, counts: 'every request', message: 'too many', limited }));
  app.get('/every', (_req, res) => {
    handled.count += 1;
    res.json({});
  });
  finishHttpApp(app, logger);
  server = await listen(app, 0, '127.0.0.1');
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  redis.disconnect();
});

test('when an address spends its allowance of refusals, then its next requests are refused 429 with Retry-After before any handler, known or not, and another address is served', async () => {
  for (let i = 0; i < 3; i += 1) expect((await send(port, '/refusals/nothing', { from: '127.0.0.2' })).status).toBe(404);
  const before = handled.count;

  const refused = await send(port, '/refusals/known', { from: '127.0.0.2' });

  expect(refused.status).toBe(429);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(90);
  expect(refused.headers.connection).toBe('close');
  expect(JSON.parse(refused.body)).toEqual({
    error: { type: 'rate_limit_error', code: 'rate_limited', message: 'too many', request_id: refused.headers['request-id'] },
  });
  expect(handled.count).toBe(before);
  expect((await send(port, '/refusals/known', { from: '127.0.0.3' })).status).toBe(200);
  expect((await send(port, '/refusals/nothing', { from: '127.0.0.3' })).status).toBe(404);
});

test('when successes are all an address sends, then they spend nothing', async () => {
  for (let i = 0; i < 10; i += 1) expect((await send(port, '/refusals/known', { from: '127.0.0.4' })).status).toBe(200);
});

test('when every request counts, then an address past its burst is refused and another is served', async () => {
  const statuses = [];
  for (let i = 0; i < 5; i += 1) statuses.push((await send(port, '/every', { from: '127.0.0.5' })).status);
  expect(statuses).toEqual([200, 200, 200, 429, 429]);
  expect((await send(port, '/every', { from: '127.0.0.6' })).status).toBe(200);
});

test('when X-Forwarded-For is not trusted (the default), then a client cannot change its address with it', async () => {
  const statuses = [];
  for (let i = 0; i < 5; i += 1) statuses.push((await send(port, '/every', { from: '127.0.0.7', headers: { 'x-forwarded-for': `198.51.100.${i}` } })).status);
  expect(statuses).toEqual([200, 200, 200, 429, 429]);
});

describe('the client address', () => {
  async function addressSeen(trustProxy: string, headers: Record<string, string>, from = '127.0.0.8'): Promise<string> {
    const config = loadConfig(BaseConfig, { TRUST_PROXY: trustProxy });
    const logger = createLogger('address-test', 'silent');
    const app = createHttpApp({ logger, metrics: new Registry(), trustProxy: config.TRUST_PROXY });
    app.get('/address', (req, res) => {
      res.json({ address: clientAddress(req) });
    });
    finishHttpApp(app, logger);
    const own = await listen(app, 0, '127.0.0.1');
    try {
      const answer = await send((own.address() as { port: number }).port, '/address', { from, headers });
      return (JSON.parse(answer.body) as { address: string }).address;
    } finally {
      own.closeAllConnections();
      own.close();
    }
  }

  test('when TRUST_PROXY is empty, then the address is the connection peer, whatever X-Forwarded-For says', async () => {
    expect(await addressSeen('', { 'x-forwarded-for': '203.0.113.9' })).toBe('127.0.0.8');
  });

  test('when TRUST_PROXY is 1 (the ingress), then the address is the entry the proxy added last, not one the client sent before it', async () => {
    expect(await addressSeen('1', { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' })).toBe('203.0.113.9');
  });

  test('when TRUST_PROXY lists proxy ranges, then only a listed peer is believed', async () => {
    expect(await addressSeen('127.0.0.0/8', { 'x-forwarded-for': '203.0.113.9' })).toBe('203.0.113.9');
    expect(await addressSeen('10.0.0.0/8', { 'x-forwarded-for': '203.0.113.9' })).toBe('127.0.0.8');
  });

  test('when an IPv4 address is written another way (leading zeros, hex, three parts), then it is counted as one address', async () => {
    expect(await addressSeen('1', { 'x-forwarded-for': '203.0.113.010' })).toBe('203.0.113.8');
    expect(await addressSeen('1', { 'x-forwarded-for': '0xcb.0.113.8' })).toBe('203.0.113.8');
    expect(await addressSeen('1', { 'x-forwarded-for': '203.0.29960' })).toBe('203.0.117.8');
    expect(await addressSeen('1', { 'x-forwarded-for': '203.0.113.255' })).toBe('203.0.113.255');
  });

  test('when the client is on IPv6, then its /64 is the address counted', async () => {
    expect(await addressSeen('1', { 'x-forwarded-for': '2001:db8:1:2:aaaa:bbbb:cccc:dddd' })).toBe('2001:db8:1:2::/64');
    expect(await addressSeen('1', { 'x-forwarded-for': '::ffff:203.0.113.9' })).toBe('203.0.113.9');
  });

  test('when two IPv6 connections come from one /64, then every count per address (connections included) takes them as one client', () => {
    expect(addressGroup('2001:db8:1:2::5')).toBe(addressGroup('2001:db8:1:2:ffff:ffff:ffff:1'));
    expect(addressGroup('2001:db8:1:3::5')).not.toBe(addressGroup('2001:db8:1:2::5'));
    expect(addressGroup('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(addressGroup('')).toBe('unknown');
  });

  test('when TRUST_PROXY is malformed or trusts everyone, then the configuration is refused', () => {
    expect(() => loadConfig(BaseConfig, { TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig(BaseConfig, { TRUST_PROXY: '10.0.0.0/8, nonsense' })).toThrow(/TRUST_PROXY/);
    expect(loadConfig(BaseConfig, { TRUST_PROXY: 'loopback, 10.0.0.0/8' }).TRUST_PROXY).toEqual(['loopback', '10.0.0.0/8']);
    expect(loadConfig(BaseConfig, {}).TRUST_PROXY).toBe(false);
  });
});
