import { spawn } from 'node:child_process';
import { join } from 'node:path';
import amqp from 'amqplib';
import { DepositReceived, EXCHANGES, QUEUES, ROUTING_KEYS } from '@pmatch/contracts';
import {
  Broker,
  REPO_ROOT,
  REDIS_URL,
  cleanUpBroker,
  createLogger,
  type BrokerUserOf,
  createTestDatabase,
  databaseUrlAs,
  localBrokerUrlFor,
  localUsersExist,
  uniqueName,
  type TestDatabase,
} from '@pmatch/testkit';

/**
 * One RabbitMQ user per process on the real broker (scripts/broker-users.mjs creates them on this
 * machine): each publishes and consumes what it owns, and with another's credentials the broker
 * refuses (ACCESS_REFUSED) what that other one owns. The topology is the topology user's to
 * declare; a service's user only checks it.
 */

const prefix = `${uniqueName('t')}.`;
const logger = createLogger('test', 'silent');
const urlOf = (who: BrokerUserOf) => localBrokerUrlFor(who);

beforeAll(async () => {
  if (!(await localUsersExist())) throw new Error('the per-service broker users are missing: run scripts/setup.sh (scripts/broker-users.mjs) first');
  await Broker.declareTopology(urlOf('topology'), prefix);
});

afterAll(() => cleanUpBroker(prefix));

/** What the broker answers `action` on a channel of `who`'s: 'ok', or the reason it closed the channel (ACCESS_REFUSED …). */
async function attempt(who: BrokerUserOf, action: (channel: amqp.ConfirmChannel) => Promise<unknown>): Promise<string> {
  const connection = await amqp.connect(urlOf(who));
  try {
    const channel = await connection.createConfirmChannel();
    const closed = new Promise<string>((resolve) => channel.on('error', (error: Error) => resolve(error.message)));
    channel.on('close', () => undefined);
    const outcome = await Promise.race([
      action(channel).then(
        () => 'ok',
        (error: Error) => error.message,
      ),
      closed,
    ]);
    return /ACCESS_REFUSED/.test(outcome) ? 'ACCESS_REFUSED' : outcome;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

const consume = (queue: string) => (channel: amqp.ConfirmChannel) => channel.consume(`${prefix}${queue}`, () => undefined);
const publish = (exchange: string, routingKey: string) => async (channel: amqp.ConfirmChannel) => {
  channel.publish(exchange === '' ? '' : `${prefix}${exchange}`, routingKey, Buffer.from('{}'), { messageId: 'permission-check' });
  await channel.waitForConfirms();
};

const SERVICES: BrokerUserOf[] = ['orders-api', 'bank-ingest', 'matcher', 'webhook-dispatcher', 'ops'];

describe('who may consume which queue', () => {
  const owners: [string, BrokerUserOf][] = [
    [QUEUES.matcherDeposits, 'matcher'],
    [QUEUES.matcherLateOrders, 'matcher'],
    [QUEUES.matcherCommands, 'matcher'],
    [QUEUES.bankIngestCommands, 'bank-ingest'],
    [QUEUES.dispatcherEvents, 'webhook-dispatcher'],
    [QUEUES.dispatcherRequests, 'webhook-dispatcher'],
  ];

  test.each(owners)('when %s is consumed, then only its owner (%s) may', async (queue, owner) => {
    const outcomes = Object.fromEntries(await Promise.all(SERVICES.map(async (who) => [who, await attempt(who, consume(queue))])));

    expect(outcomes).toEqual(Object.fromEntries(SERVICES.map((who) => [who, who === owner ? 'ok' : 'ACCESS_REFUSED'])));
  });

  test('when a dead-letter queue is consumed, then no service may, only the operator (ops dlq list and replay)', async () => {
    const outcomes = await Promise.all(SERVICES.map((who) => attempt(who, consume(`${QUEUES.matcherDeposits}.dead`))));

    expect(outcomes).toEqual(SERVICES.map((who) => (who === 'ops' ? 'ok' : 'ACCESS_REFUSED')));
  });
});

describe('who may publish where', () => {
  test('when the topic exchanges are published to, then only the services with an outbox relay may; the dispatcher and the CLI may not', async () => {
    const bank = Object.fromEntries(
      await Promise.all(SERVICES.map(async (who) => [who, await attempt(who, publish(EXCHANGES.bank, ROUTING_KEYS.depositReceived))])),
    );
    const events = Object.fromEntries(
      await Promise.all(SERVICES.map(async (who) => [who, await attempt(who, publish(EXCHANGES.events, ROUTING_KEYS.eventRecorded))])),
    );

    const relays = { 'orders-api': 'ok', 'bank-ingest': 'ok', matcher: 'ok', 'webhook-dispatcher': 'ACCESS_REFUSED', ops: 'ACCESS_REFUSED' };
    expect(bank).toEqual(relays);
    expect(events).toEqual(relays);
  });

  test('when requests go to a queue by name (the default exchange), then the dispatcher may not send any', async () => {
    const outcomes = Object.fromEntries(
      await Promise.all(SERVICES.map(async (who) => [who, await attempt(who, publish('', `${prefix}${QUEUES.matcherCommands}.unrouted-check`))])),
    );

    expect(outcomes).toEqual({ 'orders-api': 'ok', 'bank-ingest': 'ok', matcher: 'ok', 'webhook-dispatcher': 'ACCESS_REFUSED', ops: 'ok' });
  });

  test('when a service declares or deletes anything, then it is refused: only the topology user configures, and only the topology', async () => {
    const declare = (channel: amqp.ConfirmChannel) => channel.assertQueue(`${prefix}${QUEUES.matcherDeposits}.extra`, { durable: false });
    const remove = (channel: amqp.ConfirmChannel) => channel.deleteQueue(`${prefix}${QUEUES.matcherDeposits}`);

    expect(await Promise.all(SERVICES.map((who) => attempt(who, declare)))).toEqual(SERVICES.map(() => 'ACCESS_REFUSED'));
    expect(await Promise.all(SERVICES.map((who) => attempt(who, remove)))).toEqual(SERVICES.map(() => 'ACCESS_REFUSED'));
    // The topology user declares the topology (again: idempotent), and nothing else.
    await expect(Broker.declareTopology(urlOf('topology'), prefix)).resolves.toBeUndefined();
    expect(await attempt('topology', declare)).toBe('ACCESS_REFUSED');
  });
});

describe("services' broker code with their own and with others' users", () => {
  test('when a service connects with its own user, then it finds the topology (passively) and consumes its queue', async () => {
    const broker = await Broker.connect(urlOf('matcher'), prefix, logger);
    try {
      const consuming = broker.consume(QUEUES.matcherDeposits, DepositReceived, async () => undefined, { prefetch: 1 });
      await expect(consuming).resolves.toEqual(expect.any(Function));
      await (
        await consuming
      )();
    } finally {
      await broker.close();
    }
  });

  test("when the matcher's code runs with the dispatcher's user, then consuming the matcher's queue is refused", async () => {
    const broker = await Broker.connect(urlOf('webhook-dispatcher'), prefix, logger);
    try {
      await expect(broker.consume(QUEUES.matcherDeposits, DepositReceived, async () => undefined, { prefetch: 1 })).rejects.toThrow(/ACCESS_REFUSED/);
    } finally {
      await broker.close();
    }
  });

  test("when a service's user finds no topology, then connecting fails naming the migrate step, and nothing is declared", async () => {
    const missing = `${uniqueName('t')}.`;

    await expect(Broker.connect(urlOf('matcher'), missing, logger)).rejects.toThrow(
      /topology .* is missing and this broker user may not declare it: run the migrate step/,
    );
  });
});

describe('a service process started with another service’s credentials', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db?.drop());

  test('when the matcher starts with the dispatcher’s broker user, then it exits at start with ACCESS_REFUSED', async () => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'services', 'matcher', 'dist', 'main.js')], {
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        DATABASE_URL: databaseUrlAs(db.url, 'pmatch_matcher'),
        RABBITMQ_URL: urlOf('webhook-dispatcher'),
        AMQP_PREFIX: prefix,
        REDIS_URL,
        REDIS_PREFIX: `pmatch-test:${prefix}`,
        MATCHER_PORT: '0',
        MATCHER_ADMIN_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));

    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

    expect(code).not.toBe(0);
    expect(output).toMatch(/ACCESS_REFUSED/);
  });
});
