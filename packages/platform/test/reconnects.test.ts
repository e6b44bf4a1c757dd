import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { AppError, QUEUES } from '@pmatch/contracts';
import { RABBITMQ_URL, REDIS_URL, createTestDatabase, uniqueName, waitFor, type TestDatabase } from '@pmatch/testkit';
import { z } from 'zod';
import { BaseConfig, Broker, createLogger, startService } from '../src';

/**
 * A TCP proxy in front of a real server whose connections the test can cut: `cut` ends every
 * connection through it and refuses new ones, as a restarting server does; `resume` lets them in.
 */
class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private refusing = false;

  private constructor(private readonly server: Server) {}

  static async start(target: string): Promise<CuttableProxy> {
    const url = new URL(target);
    const port = Number(url.port || (url.protocol === 'amqp:' ? 5672 : 6379));
    let proxy!: CuttableProxy;
    const server = createServer((client) => {
      if (proxy.refusing) {
        client.destroy();
        return;
      }
      const upstream = connect(port, url.hostname);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        proxy.sockets.add(a);
        a.pipe(b);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          proxy.sockets.delete(a);
          b.destroy();
        });
      }
    });
    proxy = new CuttableProxy(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `target` with its host and port replaced by the proxy's. */
  url(target: string): string {
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as AddressInfo).port);
    return url.toString();
  }

  cut(): void {
    this.refusing = true;
    for (const socket of this.sockets) socket.destroy();
  }

  resume(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

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
