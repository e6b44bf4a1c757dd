import { MatcherCommand, OrderReply, QUEUES } from '@pmatch/contracts';
import { type Database, type PrismaClient } from '@pmatch/db';
import { Broker, DEADLINE_HEADER, ManualClock, createLogger } from '@pmatch/platform';
import { RABBITMQ_URL, uniqueName } from '@pmatch/testkit';
import amqp from 'amqplib';
import type { Redis } from 'ioredis';
import { commandHandler } from '../src/amqp/commands';
import { CommandExpiredError, runCommand } from '../src/use-cases/commands';
import type { MatcherDeps } from '../src/use-cases/deps';
import { orderRow, seedAccount, matcherDeps } from './support/seed';
import { testReadings } from './support/readings';
import { useMatcherStores } from './support/stores';

/**
 * A command whose caller got 503 on timeout is never carried out afterwards (the caller may have
 * retried it): the broker expires it unconsumed, and the matcher drops it past its deadline, on
 * delivery or once it has the account lock.
 */

const logger = createLogger('test', 'silent');
let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let broker: Broker;
let deps: MatcherDeps;

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  broker = await Broker.connect(RABBITMQ_URL, `${uniqueName('t')}.`, logger);
  deps = matcherDeps(database, redis, new ManualClock('2026-11-22T10:00:00Z'), await testReadings());
});

afterAll(async () => {
  await broker?.deleteTopology();
  await broker?.close();
});

async function seedOpenOrders(count: number): Promise<{ orgId: string; orderIds: string[] }> {
  const { orgId, accountId } = await seedAccount(prisma);
  const rows = Array.from({ length: count }, () => orderRow(orgId, accountId, 5000n));
  await prisma.order.createMany({ data: rows });
  return { orgId, orderIds: rows.map((row) => row.id) };
}

const markPaid = (orgId: string, orderId: string): Extract<MatcherCommand, { type: 'order.mark_paid' }> => ({
  type: 'order.mark_paid',
  organisation_id: orgId,
  mode: 'test',
  order_id: orderId,
  trigger: 'api',
});

const statusOf = async (orderId: string) => (await prisma.order.findUniqueOrThrow({ where: { id: orderId } })).status;

async function deadLettered(): Promise<number> {
  const connection = await amqp.connect(RABBITMQ_URL);
  try {
    const channel = await connection.createChannel();
    return (await channel.checkQueue(broker.name(`${QUEUES.matcherCommands}.dead`))).messageCount;
  } finally {
    await connection.close();
  }
}

async function consumeCommands() {
  return broker.consume(QUEUES.matcherCommands, MatcherCommand, commandHandler({ ...deps, broker, onRecorded: () => undefined }), { prefetch: 1 });
}

describe('command deadlines', () => {
  test('when the caller timed out before the matcher was there, then the matcher drops the command on delivery and it is never carried out', async () => {
    const {
      orgId,
      orderIds: [late, next],
    } = await seedOpenOrders(2);

    await expect(broker.request(QUEUES.matcherCommands, markPaid(orgId, late!), OrderReply, 300)).rejects.toMatchObject({ code: 'service_unavailable' });
    const stop = await consumeCommands();
    // One consumer with prefetch 1 takes the queue in order: once `next` is answered, `late` was delivered first.
    const reply = await broker.request(QUEUES.matcherCommands, markPaid(orgId, next!), OrderReply, 10_000);
    await stop();

    expect(reply).toMatchObject({ ok: true, order: { id: next, status: 'paid_outside' } });
    expect(await statusOf(late!)).toBe('open');
    expect(await deadLettered()).toBe(0);
  });

  test('when a command arrives past the deadline its caller set, then the matcher drops it without effect or answer', async () => {
    const {
      orgId,
      orderIds: [late, next],
    } = await seedOpenOrders(2);
    const stop = await consumeCommands();
    const connection = await amqp.connect(RABBITMQ_URL);
    try {
      const channel = await connection.createConfirmChannel();
      const { queue: replyQueue } = await channel.assertQueue('', { exclusive: true });
      const replies: unknown[] = [];
      await channel.consume(replyQueue, (msg) => msg && replies.push(JSON.parse(msg.content.toString())), { noAck: true });
      // No broker expiration: only the deadline the caller wrote, already past (a host whose request sat in a buffer).
      channel.sendToQueue(broker.name(QUEUES.matcherCommands), Buffer.from(JSON.stringify(markPaid(orgId, late!))), {
        messageId: `late_${late}`,
        correlationId: 'late',
        replyTo: replyQueue,
        headers: { [DEADLINE_HEADER]: Date.now() - 1 },
      });
      await channel.waitForConfirms();

      const reply = await broker.request(QUEUES.matcherCommands, markPaid(orgId, next!), OrderReply, 10_000);

      expect(reply).toMatchObject({ ok: true, order: { id: next, status: 'paid_outside' } });
      expect(await statusOf(late!)).toBe('open');
      expect(await prisma.inbox.count({ where: { messageId: `late_${late}` } })).toBe(0);
      expect(replies).toEqual([]);
    } finally {
      await connection.close();
      await stop();
    }
  });

  test('when the deadline passes while the command waits for the account lock, then it changes nothing', async () => {
    const {
      orgId,
      orderIds: [order],
    } = await seedOpenOrders(1);

    await expect(runCommand(deps, markPaid(orgId, order!), `m_${order}`, () => false)).rejects.toThrow(CommandExpiredError);

    expect(await statusOf(order!)).toBe('open');
    expect(await prisma.inbox.count({ where: { messageId: `m_${order}` } })).toBe(0);
  });
});
