import { EXCHANGES, QUEUES, ROUTING_KEYS, TransactionId } from '@pmatch/contracts';
import { createDatabase, enqueue, type Database, type PrismaClient } from '@pmatch/db';
import { RABBITMQ_URL, createTestDatabase, uniqueName, waitFor, type TestDatabase } from '@pmatch/testkit';
import amqp from 'amqplib';
import { z } from 'zod';
import { Broker, DELIVERY_LIMIT, OutboxRelay, createLogger } from '../src';

const logger = createLogger('test', 'silent');
let db: TestDatabase;
let database: Database;
let prisma: PrismaClient;
let broker: Broker;

beforeAll(async () => {
  db = await createTestDatabase();
  database = createDatabase(db.url);
  prisma = database.prisma;
  broker = await Broker.connect(RABBITMQ_URL, `${uniqueName('t')}.`, logger);
});

afterAll(async () => {
  await broker?.deleteTopology();
  await broker?.close();
  await prisma?.$disconnect();
  await db?.drop();
});

const Message = z.object({ transaction_id: TransactionId, bank_account_id: z.string() });
const body = (n: number) => ({ transaction_id: `txn_${String(n).padStart(24, '0')}`, bank_account_id: 'ba_x' });

describe('outbox relay', () => {
  test('when two relays publish the same outbox concurrently, then every row is published and marked once', async () => {
    const count = 450;
    await prisma.$transaction(async (tx) => {
      for (let i = 0; i < count; i++) {
        await enqueue(tx, { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived, payload: body(i), messageId: `m-${i}` });
      }
    });
    const seen: string[] = [];
    const stop = await broker.consume(QUEUES.matcherDeposits, Message, async (d) => void seen.push(d.messageId), { prefetch: 100 });
    const relays = [new OutboxRelay(database, broker, logger, 10_000), new OutboxRelay(database, broker, logger, 10_000)];

    const published = await Promise.all(relays.map(async (relay) => {
      let total = 0;
      for (let n = await relay.publishBatch(); n > 0; n = await relay.publishBatch()) total += n;
      return total;
    }));

    expect(published[0]! + published[1]!).toBe(count);
    await waitFor(() => (seen.length >= count ? true : undefined), { what: 'all messages consumed' });
    await stop();
    expect(new Set(seen).size).toBe(count);
    expect(seen).toHaveLength(count);
    expect(await prisma.outbox.count({ where: { publishedAt: null } })).toBe(0);
  });

  const enqueueMessages = async (prefix: string, count: number) => {
    await prisma.$transaction(async (tx) => {
      for (let i = 0; i < count; i++) {
        await enqueue(tx, { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived, payload: body(i), messageId: `${prefix}-${i}` });
      }
    });
  };
  const unpublished = async (prefix: string) =>
    (await prisma.outbox.findMany({ where: { messageId: { startsWith: `${prefix}-` }, publishedAt: null }, orderBy: { id: 'asc' } })).map((r) => r.messageId);
  const drain = async (relay: OutboxRelay) => {
    while ((await relay.publishBatch()) > 0);
    await queuedMessageIds();
  };
  /** Takes every message waiting in the deposits queue (so none is left for the next test) and gives their ids. */
  const queuedMessageIds = async (): Promise<string[]> => {
    const connection = await amqp.connect(RABBITMQ_URL);
    try {
      const channel = await connection.createChannel();
      const ids: string[] = [];
      for (let msg = await channel.get(broker.name(QUEUES.matcherDeposits)); msg; msg = await channel.get(broker.name(QUEUES.matcherDeposits))) {
        ids.push(String(msg.properties.messageId));
        channel.ack(msg);
      }
      return ids;
    } finally {
      await connection.close();
    }
  };

  test('when a relay is stopped while it publishes a batch, then it marks that batch and claims nothing more', async () => {
    await drain(new OutboxRelay(database, broker, logger, 10_000));
    await enqueueMessages('stopping', 210);
    const seen = new Set<string>();
    const stopConsuming = await broker.consume(QUEUES.matcherDeposits, Message, async (d) => void seen.add(d.messageId), { prefetch: 100 });
    let reached!: () => void;
    const publishing = new Promise<void>((resolve) => (reached = resolve));
    let confirm!: () => void;
    const confirmed = new Promise<void>((resolve) => (confirm = resolve));
    // The real broker, but the first batch waits until the test has asked the relay to stop.
    const held: Broker = Object.create(broker, {
      publishBatch: {
        value: async (...args: Parameters<Broker['publishBatch']>) => {
          reached();
          await confirmed;
          return broker.publishBatch(...args);
        },
      },
    });
    const relay = new OutboxRelay(database, held, logger, 10_000);

    relay.start();
    await publishing;
    const stopped = relay.stop();
    confirm();
    await stopped;

    const rows = await prisma.outbox.findMany({ where: { messageId: { startsWith: 'stopping-' } }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => r.publishedAt !== null)).toEqual([...Array(200).fill(true), ...Array(10).fill(false)]);
    expect(rows.every((r) => r.leasedUntil === null)).toBe(true);
    await waitFor(() => (seen.size >= 200 ? true : undefined), { what: 'the first batch consumed' });
    expect(await new OutboxRelay(database, broker, logger, 10_000).publishBatch()).toBe(10);
    await waitFor(() => (seen.size >= 210 ? true : undefined), { what: 'the rest consumed' });
    await stopConsuming();
  });

  test('when a relay cannot get its batch confirmed, then the batch is handed back at once and the next relay publishes it', async () => {
    await drain(new OutboxRelay(database, broker, logger, 10_000));
    await enqueueMessages('unconfirmed', 3);
    const closedBroker = await Broker.connect(RABBITMQ_URL, `${uniqueName('t')}.`, logger);
    await closedBroker.deleteTopology();
    await closedBroker.close();

    await expect(new OutboxRelay(database, closedBroker, logger, 10_000).publishBatch()).rejects.toThrow();

    const rows = await prisma.outbox.findMany({ where: { messageId: { startsWith: 'unconfirmed-' } } });
    expect(rows.map((r) => [r.publishedAt, r.leasedUntil])).toEqual([[null, null], [null, null], [null, null]]);
    expect(await new OutboxRelay(database, broker, logger, 10_000).publishBatch()).toBe(3);
    expect(await unpublished('unconfirmed')).toEqual([]);
    expect(await queuedMessageIds()).toEqual(['unconfirmed-0', 'unconfirmed-1', 'unconfirmed-2']);
  });

  test('when a relay died holding a lease, then its rows are left to it until the lease passes and are published after', async () => {
    const relay = new OutboxRelay(database, broker, logger, 10_000);
    await drain(relay);
    await enqueueMessages('leased', 4);
    // What a relay killed between claiming and marking leaves behind: two rows under a live lease.
    await prisma.$executeRaw`UPDATE outbox SET leased_until = now() + interval '1 hour' WHERE message_id IN ('leased-0', 'leased-2')`;

    expect(await relay.publishBatch()).toBe(2);
    expect(await unpublished('leased')).toEqual(['leased-0', 'leased-2']);
    expect(await queuedMessageIds()).toEqual(['leased-1', 'leased-3']);

    await prisma.$executeRaw`UPDATE outbox SET leased_until = now() - interval '1 second' WHERE message_id IN ('leased-0', 'leased-2')`;
    expect(await relay.publishBatch()).toBe(2);
    expect(await unpublished('leased')).toEqual([]);
    expect(await queuedMessageIds()).toEqual(['leased-0', 'leased-2']);
    expect(await prisma.outbox.count({ where: { messageId: { startsWith: 'leased-' }, leasedUntil: { not: null } } })).toBe(0);
  });
});

describe('consumer', () => {
  async function deadLetters(queue: string): Promise<string[]> {
    const connection = await amqp.connect(RABBITMQ_URL);
    const channel = await connection.createChannel();
    const ids: string[] = [];
    for (let msg = await channel.get(broker.name(`${queue}.dead`)); msg; msg = await channel.get(broker.name(`${queue}.dead`))) {
      ids.push(String(msg.properties.messageId));
      channel.ack(msg);
    }
    await connection.close();
    return ids;
  }

  test('when a message does not match its contract, then it goes to the dead-letter queue without reaching the handler', async () => {
    let handled = 0;
    const stop = await broker.consume(QUEUES.matcherDeposits, Message, async () => void handled++, { prefetch: 1 });

    await broker.publish(EXCHANGES.bank, ROUTING_KEYS.depositReceived, { transaction_id: 42 }, { messageId: 'poison-1' });

    const dead = await waitFor(async () => {
      const ids = await deadLetters(QUEUES.matcherDeposits);
      return ids.length > 0 ? ids : undefined;
    }, { what: 'the poison message to be dead-lettered' });
    await stop();
    expect(dead).toEqual(['poison-1']);
    expect(handled).toBe(0);
  });

  test('when a handler keeps failing, then the message is retried up to the delivery limit and then dead-lettered', async () => {
    let attempts = 0;
    const stop = await broker.consume(QUEUES.matcherDeposits, Message, async () => {
      attempts++;
      throw new Error('database down');
    }, { prefetch: 1, retryBackoffMs: 5 });

    await broker.publish(EXCHANGES.bank, ROUTING_KEYS.depositReceived, body(1), { messageId: 'failing-1' });

    const dead = await waitFor(async () => {
      const ids = await deadLetters(QUEUES.matcherDeposits);
      return ids.length > 0 ? ids : undefined;
    }, { what: 'the failing message to be dead-lettered', timeoutMs: 30_000 });
    await stop();
    expect(dead).toEqual(['failing-1']);
    expect(attempts).toBe(DELIVERY_LIMIT + 1);
  });
});

describe('request/reply', () => {
  test('when nobody answers in time, then the request fails with 503 service_unavailable', async () => {
    await expect(broker.request(QUEUES.matcherCommands, { type: 'x' }, z.unknown(), 200)).rejects.toMatchObject({
      code: 'service_unavailable',
      status: 503,
    });
  });

  test('when the server replies, then the requester gets the parsed reply', async () => {
    const stop = await broker.consume(QUEUES.bankIngestCommands, z.object({ n: z.number() }), async (d) => {
      await broker.reply(d.replyTo!, d.correlationId!, { doubled: d.body.n * 2 });
    }, { prefetch: 1 });

    const reply = await broker.request(QUEUES.bankIngestCommands, { n: 21 }, z.object({ doubled: z.number() }), 5_000);

    await stop();
    expect(reply).toEqual({ doubled: 42 });
  });
});
