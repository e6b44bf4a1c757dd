import { EXCHANGES, QUEUES, ROUTING_KEYS, TransactionId } from '@pmatch/contracts';
import {
  createDatabase,
  enqueue,
  outboxInsert,
  outboxValues,
  preparedQuery,
  type Database,
  type LeasedMessage,
  type OutboxValues,
  type PrismaClient,
} from '@pmatch/db';
import { PLAN_CACHE_MODES, RABBITMQ_URL, createTestDatabase, planNodes, preparedPlan, uniqueName, waitFor, type TestDatabase } from '@pmatch/testkit';
import amqp from 'amqplib';
import { z } from 'zod';
import { Broker, DELIVERY_LIMIT, HANDED_OVER_LIMIT, OutboxRelay, createLogger, releaseLease } from '../src';

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

/**
 * The real broker, but its first batch waits until the test lets it go: `publishing` resolves when
 * a relay has reached the broker, `release` lets that batch (and every later one) through.
 */
function heldBroker() {
  let reached!: () => void;
  const publishing = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const held: Broker = Object.create(broker, {
    publishBatch: {
      value: async (...args: Parameters<Broker['publishBatch']>) => {
        reached();
        await released;
        return broker.publishBatch(...args);
      },
    },
  });
  return { held, publishing, release };
}

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

    const published = await Promise.all(
      relays.map(async (relay) => {
        let total = 0;
        for (let n = await relay.publishBatch(); n > 0; n = await relay.publishBatch()) total += n;
        return total;
      }),
    );

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
    // The first batch waits until the test has asked the relay to stop.
    const { held, publishing, release: confirm } = heldBroker();
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
    expect(rows.map((r) => [r.publishedAt, r.leasedUntil])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
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

describe('outbox relay: rows handed over by their writer', () => {
  const insertLeased = preparedQuery<OutboxValues>('test.insert_outbox_leased', (p) => outboxInsert(p, undefined, { leased: true }));
  const leasedMessages = (prefix: string, count: number): LeasedMessage[] =>
    Array.from({ length: count }, (_, i) => ({
      exchange: EXCHANGES.bank,
      routingKey: ROUTING_KEYS.depositReceived,
      payload: body(i),
      messageId: `${prefix}-${i}`,
    }));
  /** What a writer does: insert the rows leased, in a statement of their own, and hand them over once it committed. */
  const writeLeased = async (messages: LeasedMessage[]) => void (await database.sql.count(insertLeased, outboxValues(messages)));
  const rowsOf = (prefix: string) => prisma.outbox.findMany({ where: { messageId: { startsWith: `${prefix}-` } }, orderBy: { id: 'asc' } });
  /** Consumes the deposits queue into `seen` until stopped. */
  const consumeInto = (seen: string[]) => broker.consume(QUEUES.matcherDeposits, Message, async (d) => void seen.push(d.messageId), { prefetch: 100 });
  /** Publishes what any test left unpublished and empties the queue, so that each test sees only its own messages. */
  const drainAll = async () => {
    const relay = new OutboxRelay(database, broker, logger, 10_000);
    while ((await relay.publishBatch()) > 0);
    const connection = await amqp.connect(RABBITMQ_URL);
    try {
      await (await connection.createChannel()).purgeQueue(broker.name(QUEUES.matcherDeposits));
    } finally {
      await connection.close();
    }
  };

  test('when rows are inserted leased, then a claim leaves them to the writer that will hand them over', async () => {
    await drainAll();
    await writeLeased(leasedMessages('kept', 2));

    expect(await new OutboxRelay(database, broker, logger, 10_000).publishBatch()).toBe(0);
    const rows = await rowsOf('kept');
    expect(rows.map((r) => r.publishedAt)).toEqual([null, null]);
    expect(rows.every((r) => r.leasedUntil !== null && r.leasedUntil.getTime() > Date.now() + 10_000)).toBe(true);
    // Left for a later test's relay to find once the lease has run out.
    await prisma.$executeRaw`UPDATE outbox SET leased_until = now() - interval '1 second' WHERE message_id LIKE 'kept-%'`;
    await drainAll();
  });

  test('when a writer hands over rows it inserted leased, then they are published in order and marked, with no claim', async () => {
    await drainAll();
    const seen: string[] = [];
    const stopConsuming = await consumeInto(seen);
    const messages = leasedMessages('handed', 5);
    await writeLeased(messages);
    // The rows' lease outlives the test: what the relay publishes can only come from the hand-over.
    const relay = new OutboxRelay(database, broker, logger, 60_000);
    relay.start();

    relay.publishLeased(messages.slice(0, 3));
    relay.publishLeased(messages.slice(3));

    await waitFor(() => (seen.length >= 5 ? true : undefined), { what: 'the handed-over messages consumed' });
    await relay.stop();
    await stopConsuming();
    expect(seen).toEqual(['handed-0', 'handed-1', 'handed-2', 'handed-3', 'handed-4']);
    const rows = await rowsOf('handed');
    expect(rows.every((r) => r.publishedAt !== null && r.leasedUntil === null)).toBe(true);
  });

  test('when the broker does not confirm rows handed over, then their leases are released and the next claim publishes them', async () => {
    await drainAll();
    const messages = leasedMessages('refused', 3);
    await writeLeased(messages);
    const closedBroker = await Broker.connect(RABBITMQ_URL, `${uniqueName('t')}.`, logger);
    await closedBroker.deleteTopology();
    await closedBroker.close();
    const relay = new OutboxRelay(database, closedBroker, logger, 60_000);

    relay.publishLeased(messages);
    await waitFor(async () => ((await rowsOf('refused')).every((r) => r.leasedUntil === null) ? true : undefined), { what: 'the leases released' });
    await relay.stop();

    expect((await rowsOf('refused')).map((r) => [r.publishedAt, r.leasedUntil])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
    const seen: string[] = [];
    const stopConsuming = await consumeInto(seen);
    expect(await new OutboxRelay(database, broker, logger, 60_000).publishBatch()).toBe(3);
    await waitFor(() => (seen.length >= 3 ? true : undefined), { what: 'the released messages consumed' });
    await stopConsuming();
    expect(seen).toEqual(['refused-0', 'refused-1', 'refused-2']);
  });

  test.each(PLAN_CACHE_MODES)(
    'when leases are released (%s) while many rows wait unpublished and the statistics predate them, then the rows are found by message id',
    async (planCacheMode) => {
      await drainAll();
      await prisma.$executeRaw`ANALYZE outbox`;
      await prisma.$executeRaw`
        INSERT INTO outbox (message_id, exchange, routing_key, payload)
        SELECT 'waiting-' || g, ${EXCHANGES.bank}, ${ROUTING_KEYS.depositReceived}, '{}'::jsonb FROM generate_series(1, 2000) g`;
      try {
        const plan = await preparedPlan(prisma, releaseLease.text, `ARRAY['waiting-1', 'waiting-2']`, planCacheMode);

        // Through the message-id key, as an index scan or a bitmap of it: never outbox_unpublished_idx,
        // which holds every waiting row, nor the table.
        const scans = planNodes(plan).filter((n) => String(n['Node Type']).endsWith('Scan'));
        expect(scans.flatMap((n) => (n['Index Name'] === undefined ? [] : [n['Index Name']]))).toEqual(['outbox_message_id_key']);
        expect(scans.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
      } finally {
        await prisma.$executeRaw`DELETE FROM outbox WHERE message_id LIKE 'waiting-%'`;
      }
    },
  );

  test('when a relay is stopped, then what was handed over before is published first', async () => {
    await drainAll();
    const messages = leasedMessages('before-stop', 4);
    await writeLeased(messages);
    const relay = new OutboxRelay(database, broker, logger, 60_000);

    relay.publishLeased(messages);
    await relay.stop();
    relay.publishLeased(leasedMessages('after-stop', 1));

    expect((await rowsOf('before-stop')).every((r) => r.publishedAt !== null)).toBe(true);
    const seen: string[] = [];
    const stopConsuming = await consumeInto(seen);
    await waitFor(() => (seen.length >= 4 ? true : undefined), { what: 'the messages published at stop consumed' });
    await stopConsuming();
    expect(seen).toEqual(['before-stop-0', 'before-stop-1', 'before-stop-2', 'before-stop-3']);
  });

  test('when the broker holds a pass, then at most HANDED_OVER_LIMIT messages wait in memory and the rest are claimed once their lease runs out', async () => {
    await drainAll();
    // Its first batch waits, as under a memory alarm, until the test lets it go.
    const { held, publishing, release } = heldBroker();
    const relay = new OutboxRelay(database, held, logger, 60_000);
    const first = leasedMessages('held', 1);
    await writeLeased(first);
    relay.publishLeased(first);
    await publishing;
    const waiting = leasedMessages('over', HANDED_OVER_LIMIT + 3);
    await writeLeased(waiting);

    try {
      relay.publishLeased(waiting);
      release();

      const publishedOver = () => prisma.outbox.count({ where: { messageId: { startsWith: 'over-' }, publishedAt: { not: null } } });
      await waitFor(async () => ((await publishedOver()) >= HANDED_OVER_LIMIT ? true : undefined), { what: 'the messages kept in memory published' });
      // Stopping publishes whatever still waits in memory: what is left unpublished was never kept.
      await relay.stop();
      const left = await prisma.outbox.findMany({ where: { messageId: { startsWith: 'over-' }, publishedAt: null }, orderBy: { id: 'asc' } });
      expect(left.map((r) => r.messageId)).toEqual(waiting.slice(HANDED_OVER_LIMIT).map((m) => m.messageId));
      expect(left.every((r) => r.leasedUntil !== null)).toBe(true);
      await prisma.$executeRaw`UPDATE outbox SET leased_until = now() - interval '1 second' WHERE message_id LIKE 'over-%' AND published_at IS NULL`;
      expect(await new OutboxRelay(database, broker, logger, 60_000).publishBatch()).toBe(3);
    } finally {
      release();
      await relay.stop();
      await drainAll();
    }
  });

  test('when hand-overs keep a relay busy, then it still claims at every poll interval', async () => {
    await drainAll();
    const relay = new OutboxRelay(database, broker, logger, 100);
    await enqueueOne('first-0');
    relay.start();
    await waitFor(async () => ((await rowsOf('first'))[0]?.publishedAt ? true : undefined), { what: 'the first claim' });
    // Written by another process: nobody nudges this relay, only its poll finds the row.
    await enqueueOne('polled-0');
    let handedOver = 0;
    let polled = false;
    // Back to back: the relay always has something handed over when a pass ends.
    const handing = (async () => {
      while (!polled) {
        const messages = leasedMessages(`busy${handedOver++}`, 1);
        await writeLeased(messages);
        relay.publishLeased(messages);
      }
    })();
    try {
      await waitFor(async () => ((await rowsOf('polled'))[0]?.publishedAt ? true : undefined), { what: 'the row only a poll finds' });
    } finally {
      polled = true;
      await handing;
      await relay.stop();
      await drainAll();
    }
    expect(handedOver).toBeGreaterThan(0);
  });

  const enqueueOne = (messageId: string) =>
    enqueue(prisma, { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived, payload: body(0), messageId });
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

    const dead = await waitFor(
      async () => {
        const ids = await deadLetters(QUEUES.matcherDeposits);
        return ids.length > 0 ? ids : undefined;
      },
      { what: 'the poison message to be dead-lettered' },
    );
    await stop();
    expect(dead).toEqual(['poison-1']);
    expect(handled).toBe(0);
  });

  test('when a handler keeps failing, then the message is retried up to the delivery limit and then dead-lettered', async () => {
    let attempts = 0;
    const stop = await broker.consume(
      QUEUES.matcherDeposits,
      Message,
      async () => {
        attempts++;
        throw new Error('database down');
      },
      { prefetch: 1, retryBackoffMs: 5 },
    );

    await broker.publish(EXCHANGES.bank, ROUTING_KEYS.depositReceived, body(1), { messageId: 'failing-1' });

    const dead = await waitFor(
      async () => {
        const ids = await deadLetters(QUEUES.matcherDeposits);
        return ids.length > 0 ? ids : undefined;
      },
      { what: 'the failing message to be dead-lettered', timeoutMs: 30_000 },
    );
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
    const stop = await broker.consume(
      QUEUES.bankIngestCommands,
      z.object({ n: z.number() }),
      async (d) => {
        await broker.reply(d.replyTo!, d.correlationId!, { doubled: d.body.n * 2 });
      },
      { prefetch: 1 },
    );

    const reply = await broker.request(QUEUES.bankIngestCommands, { n: 21 }, z.object({ doubled: z.number() }), 5_000);

    await stop();
    expect(reply).toEqual({ doubled: 42 });
  });
});
