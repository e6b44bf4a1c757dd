import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { QUEUES } from '@pmatch/contracts';
import {
  Broker,
  RABBITMQ_URL,
  REDIS_URL,
  REPO_ROOT,
  TestSystem,
  brokerUrlFor,
  cleanUpBroker,
  createTestDatabase,
  freePort,
  uniqueName,
  waitFor,
  type MerchantClient,
} from '@pmatch/testkit';

/**
 * Several processes of one service: the test kit's replicas (each on its own ports, killed and
 * started one at a time, all consuming the service's queue) and `npm start`'s REPLICAS_<SERVICE>.
 */

describe('a TestSystem with two matchers', () => {
  let system: TestSystem;
  let merchant: MerchantClient;

  beforeAll(async () => {
    system = await TestSystem.start({}, { replicas: { matcher: 2 } });
    ({ client: merchant } = await system.createMerchant());
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
  });

  const consumers = async () => (await system.queueState(QUEUES.matcherDeposits)).consumers;

  test('when either matcher is SIGKILLed, then the other one decides the deposits of the account, and the killed one consumes again once started', async () => {
    const pids = system.replicaPids();
    expect(Object.keys(pids)).toEqual(['orders-api', 'bank-ingest', 'matcher#1', 'matcher#2', 'webhook-dispatcher']);
    expect(pids['matcher#1']).not.toBe(pids['matcher#2']);
    expect(system.adminUrl('matcher', 1)).not.toBe(system.adminUrl('matcher', 2));
    expect(system.pids().matcher).toBe(pids['matcher#1']);
    await waitFor(async () => ((await consumers()) === 2 ? true : undefined), { what: 'both matchers to consume deposits' });

    for (const [killed, other] of [
      [1, 2],
      [2, 1],
    ] as const) {
      await system.kill('matcher', killed);
      expect(system.replicaPids()[`matcher#${other}`]).toBe(pids[`matcher#${other}`]);
      await waitFor(async () => ((await consumers()) === 1 ? true : undefined), { what: `matcher#${killed}'s consumer to be gone` });
      const amount = 3100 + killed;
      const order = await merchant.createOrder({ amount });
      const [twin1, twin2] = [await merchant.createOrder({ amount: amount + 10 }), await merchant.createOrder({ amount: amount + 10 })];

      const confirmed = await merchant.deposit(amount);
      const held = await merchant.deposit(amount + 10);
      const unmatched = await merchant.deposit(amount + 20);

      expect(confirmed).toMatchObject({ status: 'confirmed', order_id: order.id });
      expect(held).toMatchObject({ status: 'held' });
      expect([...(held.candidate_order_ids as string[])].sort()).toEqual([twin1.id, twin2.id].sort());
      expect(unmatched.status).toBe('unmatched');
      expect((await merchant.order(order.id)).status).toBe('paid');

      await system.startService('matcher', killed);
      await waitFor(async () => ((await consumers()) === 2 ? true : undefined), { what: `matcher#${killed} to consume again` });
      pids[`matcher#${killed}`] = system.replicaPids()[`matcher#${killed}`];
    }
    await system.ready();
  });

  test('when a supervised replica dies on its own, then the test kit starts it again, counts it and keeps its last output; the other replica is untouched', async () => {
    system.supervise();
    const before = system.replicaPids();
    expect(system.supervision().matcher).toEqual({ exits: 0, restarts: 0 });

    process.kill(before['matcher#2']!, 'SIGKILL'); // not through system.kill: a crash, not the test's own stop
    await waitFor(
      () => {
        const now = system.replicaPids()['matcher#2'];
        return now !== undefined && now !== before['matcher#2'] && system.supervision().matcher.restarts === 1 ? true : undefined;
      },
      { what: 'matcher#2 to be started again' },
    );
    await system.ready();
    await waitFor(async () => ((await consumers()) === 2 ? true : undefined), { what: 'the restarted matcher to consume again' });

    expect(system.supervision()).toMatchObject({ matcher: { exits: 1, restarts: 1 }, 'orders-api': { exits: 0, restarts: 0 } });
    expect(system.exitedLogs('matcher')).toContain('--- exited on its own (SIGKILL) matcher#2:');
    expect(system.replicaPids()['matcher#1']).toBe(before['matcher#1']);
  });
});

describe('npm start with REPLICAS_MATCHER=2', () => {
  /** A free port whose neighbour ten above is free too, for the second replica. */
  async function freePortWithSecond(): Promise<number> {
    for (;;) {
      const port = await freePort();
      const free = await new Promise<boolean>((resolve) => {
        const server = createServer();
        server.once('error', () => resolve(false));
        server.listen(port + 10, '127.0.0.1', () => server.close(() => resolve(true)));
      });
      if (free && port + 10 <= 65535) return port;
    }
  }

  async function consumers(queue: string): Promise<number> {
    const connection = await amqp.connect(RABBITMQ_URL);
    try {
      return (await (await connection.createChannel()).checkQueue(queue)).consumerCount;
    } finally {
      await connection.close();
    }
  }

  function startAll(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'scripts', 'start-all.mjs')], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
  }

  test('when a replica count is not a whole number from 1 to 10, then it starts nothing and names the variable', async () => {
    const run = startAll({ REPLICAS_MATCHER: 'two', REPLICAS_WEBHOOK_DISPATCHER: '0' });

    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('REPLICAS_MATCHER="two": the number of matcher processes must be a whole number from 1 to 10');
    expect(run.output()).toContain('REPLICAS_WEBHOOK_DISPATCHER="0"');
    expect(run.output()).not.toMatch(/^matcher/m);
  });

  test('when REPLICAS_MATCHER=2, then two matcher processes run, each named in the output and ready on its own admin port, and Ctrl-C stops them all', async () => {
    const database = await createTestDatabase();
    const prefix = `${uniqueName('t')}.`;
    await Broker.declareTopology(await brokerUrlFor('topology'), prefix);
    const ports: Record<string, string> = {};
    for (const service of ['ORDERS_API', 'BANK_INGEST', 'MATCHER', 'WEBHOOK_DISPATCHER']) {
      ports[`${service}_PORT`] = String(service === 'MATCHER' ? await freePortWithSecond() : await freePort());
      ports[`${service}_ADMIN_PORT`] = String(service === 'MATCHER' ? await freePortWithSecond() : await freePort());
    }
    const run = startAll({
      ...ports,
      REPLICAS_MATCHER: '2',
      DATABASE_URL: database.url,
      RABBITMQ_URL,
      AMQP_PREFIX: prefix,
      REDIS_URL,
      REDIS_PREFIX: `pmatch-test:${prefix}`,
      LOG_LEVEL: 'info',
    });
    try {
      const second = Number(ports.MATCHER_ADMIN_PORT) + 10;
      for (const adminPort of [ports.MATCHER_ADMIN_PORT, String(second)]) {
        await waitFor(async () => ((await fetch(`http://127.0.0.1:${adminPort}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined), {
          timeoutMs: 60_000,
          what: `the matcher on admin port ${adminPort} to be ready\n${run.output()}`,
        });
      }
      expect(run.output()).toContain(`matcher#2: MATCHER_PORT=${Number(ports.MATCHER_PORT) + 10}, MATCHER_ADMIN_PORT=${second}`);
      expect(run.output()).toMatch(/^matcher#1 +\| \{/m);
      expect(run.output()).toMatch(/^matcher#2 +\| \{/m);
      expect(run.output()).toMatch(/^bank-ingest +\| \{/m);
      await waitFor(async () => ((await consumers(`${prefix}${QUEUES.matcherDeposits}`)) === 2 ? true : undefined), {
        what: 'both matchers to consume deposits',
      });

      run.child.kill('SIGINT');
      expect(await run.exited).toBe(0);
      expect(run.output()).toContain('all services stopped');
    } finally {
      // start-all stops its services only when it is signalled gently.
      if (run.child.exitCode === null && run.child.signalCode === null) {
        run.child.kill('SIGTERM');
        await run.exited;
      }
      await cleanUpBroker(prefix).catch(() => undefined);
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`pmatch-test:${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await database.drop();
    }
  }, 120_000);
});
