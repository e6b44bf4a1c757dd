import { QUEUES } from '@pmatch/contracts';
import { RABBITMQ_URL, REDIS_URL, createTestDatabase, uniqueName, type TestDatabase } from '@pmatch/testkit';
import { z } from 'zod';
import { BaseConfig, Broker, createLogger, startService, type ServiceRuntime } from '../src';

let db: TestDatabase;
let prefix: string;

beforeAll(async () => {
  db = await createTestDatabase();
});

beforeEach(() => {
  prefix = `${uniqueName('t')}.`;
});

afterEach(async () => {
  const broker = await Broker.connect(RABBITMQ_URL, prefix, createLogger('test', 'silent'));
  await broker.deleteTopology().catch(() => undefined);
  await broker.close();
});

afterAll(async () => {
  await db?.drop();
});

const config = () => BaseConfig.parse({ DATABASE_URL: db.url, RABBITMQ_URL, REDIS_URL, AMQP_PREFIX: prefix, LOG_LEVEL: 'silent' });

/** A promise with its resolve function outside, to hold work until the test lets it go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('service runtime', () => {
  test('when a service starts with Redis it requires, then /readyz on the admin port checks the database, the broker and Redis, and its routes answer before the 404', async () => {
    const service = await startService({ name: 'test-service', config: config(), port: 0, adminPort: 0 }, (runtime) => {
      runtime.redis('required');
      runtime.http.get('/hello', (_req, res) => {
        res.json({ hello: 'world' });
      });
      return {};
    });
    try {
      const base = `http://127.0.0.1:${service.port}`;
      const admin = `http://127.0.0.1:${service.adminPort}`;
      expect(service.adminPort).not.toBe(service.port);
      const ready = await fetch(`${admin}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', checks: { database: 'ok', broker: 'ok', redis: 'ok' } });
      expect(await (await fetch(`${admin}/healthz`)).json()).toEqual({ status: 'ok' });
      expect(await (await fetch(`${admin}/metrics`)).text()).toMatch(/^process_cpu_seconds_total /m);
      expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: 'world' });
      const missing = await fetch(`${base}/nothing`);
      expect(missing.status).toBe(404);
      expect((await missing.json()).error.code).toBe('resource_missing');
      // The public port answers none of the admin paths, and the admin port none of the service's routes.
      for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${base}${path}`)).status).toBe(404);
      const notAdmin = await fetch(`${admin}/hello`);
      expect(notAdmin.status).toBe(404);
      expect((await notAdmin.json()).error.code).toBe('resource_missing');
    } finally {
      await service.stop();
    }
  });

  test('when a service stops, then the request and the message in hand finish before its workers and its own resources stop, and then the broker is closed', async () => {
    const events: string[] = [];
    const request = gate();
    const message = gate();
    const requestStarted = gate();
    const messageStarted = gate();
    let runtime!: ServiceRuntime;
    const service = await startService({ name: 'test-service', config: config(), port: 0, adminPort: 0 }, async (r) => {
      runtime = r;
      r.http.get('/slow', async (_req, res) => {
        requestStarted.open();
        await request.opened;
        res.json({ done: true });
      });
      await r.consume(
        QUEUES.matcherCommands,
        z.object({ n: z.number() }),
        async () => {
          messageStarted.open();
          await message.opened;
          events.push('message handled');
        },
        { prefetch: 1 },
      );
      r.addWorker({ start: () => undefined, stop: async () => void events.push('worker stopped') });
      r.onStop(() => events.push('own resource closed'));
      return {};
    });

    const answer = fetch(`http://127.0.0.1:${service.port}/slow`).then(async (res) => {
      events.push('request answered');
      return res.json();
    });
    await requestStarted.opened;
    await runtime.broker.publish('', runtime.broker.name(QUEUES.matcherCommands), { n: 1 }, { messageId: 'm-1' });
    await messageStarted.opened;

    const stopped = service.stop();
    request.open();
    expect(await answer).toEqual({ done: true });
    // The message is still in hand: nothing after the consumers may have stopped.
    expect(events).toEqual(['request answered']);
    message.open();
    await stopped;
    expect(events).toEqual(['request answered', 'message handled', 'worker stopped', 'own resource closed']);
    await expect(runtime.broker.ping()).rejects.toThrow();
  });

  test('when setting up a service fails, then starting it fails with that error and what the runtime opened is closed', async () => {
    let runtime: ServiceRuntime | undefined;
    const started = startService({ name: 'test-service', config: config(), port: 0, adminPort: 0 }, (r) => {
      runtime = r;
      throw new Error('no such setting');
    });
    await expect(started).rejects.toThrow('no such setting');
    await expect(runtime!.broker.ping()).rejects.toThrow();
  });
});
