import { AppError, QUEUES } from '@pmatch/contracts';
import { CuttableProxy, RABBITMQ_URL, REDIS_URL, createTestDatabase, uniqueName, waitFor, type TestDatabase } from '@pmatch/testkit';
import { z } from 'zod';
import { BaseConfig, Broker, createLogger, startService } from '../src';

let db: TestDatabase;
let prefix: string;
let amqpProxy: CuttableProxy;
let redisProxy: CuttableProxy;

beforeAll(async () => {
  db = await createTestDatabase();
  amqpProxy = await CuttableProxy.start(RABBITMQ_URL);
  redisProxy = await CuttableProxy.start(REDIS_URL);
});

beforeEach(() => {
  prefix = `${uniqueName('t')}.`;
  amqpProxy.resume();
  redisProxy.resume();
});

afterEach(async () => {
  const broker = await Broker.connect(RABBITMQ_URL, prefix, createLogger('test', 'silent'));
  await broker.deleteTopology().catch(() => undefined);
  await broker.close();
});

afterAll(async () => {
  await amqpProxy?.close();
  await redisProxy?.close();
  await db?.drop();
});

const config = () =>
  BaseConfig.parse({
    DATABASE_URL: db.url,
    RABBITMQ_URL: amqpProxy.url(RABBITMQ_URL),
    REDIS_URL: redisProxy.url(REDIS_URL),
    AMQP_PREFIX: prefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  });

const Body = z.object({ n: z.number() });

async function readyz(adminPort: number): Promise<{ status: number; checks: Record<string, string> }> {
  const res = await fetch(`http://127.0.0.1:${adminPort}/readyz`);
  return { status: res.status, checks: ((await res.json()) as { checks: Record<string, string> }).checks };
}

async function brokerConnected(adminPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const line = /^pmatch_broker_connected (\d+)$/m.exec(text);
  if (line === null) throw new Error('no pmatch_broker_connected in /metrics');
  return Number(line[1]);
}

describe('reconnects inside the process', () => {
  test('when the RabbitMQ connection is cut and refused for a while, then the service stays up, /readyz says not ready, publishing and requests answer 503 (one waiting for its reply at once), and once it is back the consumer takes what was published meanwhile and after', async () => {
    const handled: number[] = [];
    const service = await startService({ name: 'test-service', config: config(), port: 0, adminPort: 0 }, async (runtime) => {
      await runtime.consume(QUEUES.dispatcherEvents, Body, async (delivery) => void handled.push(delivery.body.n), { prefetch: 5 });
      return { broker: runtime.broker };
    });
    const direct = await Broker.connect(RABBITMQ_URL, prefix, createLogger('test', 'silent'));
    try {
      await direct.publish('events', 'event.recorded', { n: 1 }, { messageId: 'm1' });
      await waitFor(() => (handled.includes(1) ? true : undefined), { what: 'the first message' });

      // A request waiting for its reply (nobody consumes the queue) when the connection goes.
      const waiting = service.broker.request(QUEUES.matcherCommands, {}, z.object({}), 60_000);
      waiting.catch(() => undefined);
      const cutAt = Date.now();
      amqpProxy.cut();
      await expect(waiting).rejects.toMatchObject({ code: 'service_unavailable' });
      expect(Date.now() - cutAt).toBeLessThan(10_000);
      await waitFor(async () => ((await readyz(service.adminPort)).status === 503 ? true : undefined), { what: '/readyz to say not ready' });
      expect((await readyz(service.adminPort)).checks).toEqual({ database: 'ok', broker: 'unavailable' });
      expect(service.broker.connected).toBe(false);
      await expect(service.broker.publish('events', 'event.recorded', { n: 9 }, { messageId: 'm9' })).rejects.toMatchObject({ code: 'service_unavailable' });
      const request = service.broker.request(QUEUES.matcherCommands, {}, z.object({}), 5_000);
      await expect(request).rejects.toBeInstanceOf(AppError);
      await expect(request).rejects.toMatchObject({ code: 'service_unavailable' });
      await direct.publish('events', 'event.recorded', { n: 2 }, { messageId: 'm2' });

      amqpProxy.resume();
      await waitFor(async () => ((await readyz(service.adminPort)).status === 200 ? true : undefined), {
        timeoutMs: 30_000,
        what: '/readyz to say ready again',
      });
      await waitFor(() => (handled.includes(2) ? true : undefined), { what: 'the message published while the service was away' });
      await service.broker.publish('events', 'event.recorded', { n: 3 }, { messageId: 'm3' });
      await waitFor(() => (handled.includes(3) ? true : undefined), { what: 'a message published by the service after the reconnect' });
      expect(handled.filter((n) => n === 9)).toEqual([]);
    } finally {
      await direct.close();
      await service.stop();
    }
  });

  test('when RabbitMQ refuses connections at start, then the service starts anyway, not ready, pmatch_broker_connected 0, and once the broker is there it is ready and consumes', async () => {
    amqpProxy.cut();
    const handled: number[] = [];
    const service = await startService({ name: 'test-service', config: config(), port: 0, adminPort: 0 }, async (runtime) => {
      await runtime.consume(QUEUES.dispatcherEvents, Body, async (delivery) => void handled.push(delivery.body.n), { prefetch: 5 });
      return { broker: runtime.broker };
    });
    const direct = await Broker.connect(RABBITMQ_URL, prefix, createLogger('test', 'silent'));
    try {
      expect(await readyz(service.adminPort)).toEqual({ status: 503, checks: { database: 'ok', broker: 'unavailable' } });
      expect(await brokerConnected(service.adminPort)).toBe(0);
      await direct.publish('events', 'event.recorded', { n: 1 }, { messageId: 'm1' });

      amqpProxy.resume();
      await waitFor(async () => ((await readyz(service.adminPort)).status === 200 ? true : undefined), { timeoutMs: 30_000, what: '/readyz to say ready' });
      expect(await brokerConnected(service.adminPort)).toBe(1);
      await waitFor(() => (handled.includes(1) ? true : undefined), { what: 'the message published before the broker was reachable' });
    } finally {
      await direct.close();
      await service.stop();
    }
  });

  test('when a service ready without the broker loses it, then /readyz still answers 200 on the database alone and pmatch_broker_connected goes 0, then 1 once it is back', async () => {
    const service = await startService({ name: 'test-service', config: config(), port: 0, adminPort: 0, readyWithoutBroker: true }, (runtime) => ({
      broker: runtime.broker,
    }));
    try {
      expect(await brokerConnected(service.adminPort)).toBe(1);
      amqpProxy.cut();
      await waitFor(async () => ((await brokerConnected(service.adminPort)) === 0 ? true : undefined), { what: 'pmatch_broker_connected to say 0' });
      expect(await readyz(service.adminPort)).toEqual({ status: 200, checks: { database: 'ok' } });
      amqpProxy.resume();
      await waitFor(async () => ((await brokerConnected(service.adminPort)) === 1 ? true : undefined), {
        timeoutMs: 30_000,
        what: 'pmatch_broker_connected to say 1 again',
      });
    } finally {
      await service.stop();
    }
  });

  test('when the broker answers but refuses the login at start, then the start fails rather than waiting', async () => {
    const url = new URL(amqpProxy.url(RABBITMQ_URL));
    url.username = 'no-such-user';
    url.password = 'wrong';
    const refused = { ...config(), RABBITMQ_URL: url.toString() };
    await expect(startService({ name: 'test-service', config: refused, port: 0, adminPort: 0, readyWithoutBroker: true }, () => ({}))).rejects.toThrow(
      /ACCESS_REFUSED|403/,
    );
  });

  test('when Redis it requires is cut and refused for a while, then no unhandled error event, /readyz says not ready, and ready again once it is back', async () => {
    const service = await startService({ name: 'test-service', config: config(), port: 0, adminPort: 0 }, (runtime) => {
      runtime.redis('required');
      return {};
    });
    try {
      await waitFor(async () => ((await readyz(service.adminPort)).status === 200 ? true : undefined), { what: 'Redis to be connected' });
      redisProxy.cut();
      await waitFor(async () => ((await readyz(service.adminPort)).status === 503 ? true : undefined), { what: '/readyz to say not ready' });
      expect((await readyz(service.adminPort)).checks).toEqual({ database: 'ok', broker: 'ok', redis: 'unavailable' });
      redisProxy.resume();
      await waitFor(async () => ((await readyz(service.adminPort)).status === 200 ? true : undefined), {
        timeoutMs: 30_000,
        what: '/readyz to say ready again',
      });
    } finally {
      await service.stop();
    }
  });
});
