import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { EXCHANGES, QUEUES, ROUTING_KEYS } from '@pmatch/contracts';
import { Broker, createLogger } from '@pmatch/platform';
import { RABBITMQ_URL, brokerUrlFor, uniqueName } from '@pmatch/testkit';
import { expectFailure, runOps, runOpsOk } from './run-ops';

/** The dlq commands touch no database: a URL nobody listens on proves it. */
const NO_DATABASE = 'postgresql://nobody@127.0.0.1:1/none';

let prefix: string;
let broker: Broker;
let connection: ChannelModel;
let channel: Channel;

beforeEach(async () => {
  prefix = `${uniqueName('dlq')}.`;
  broker = await Broker.connect(RABBITMQ_URL, prefix, createLogger('test', 'silent'));
  connection = await amqp.connect(RABBITMQ_URL);
  channel = await connection.createConfirmChannel();
});

afterEach(async () => {
  await connection?.close().catch(() => undefined);
  await broker?.deleteTopology().catch(() => undefined);
  await broker?.close();
});

/** As the operator's own broker user where this broker has the services' users: its rights are enough to list and replay. */
const ops = async (...args: string[]) => runOpsOk(NO_DATABASE, args, { AMQP_PREFIX: prefix, RABBITMQ_URL: await brokerUrlFor('ops') });

/**
 * Publishes a message to `exchange` as a service does and has its consumer reject it without
 * requeueing, as one does a message that does not parse: the broker dead-letters it, x-death and all.
 */
async function deadLetter(exchange: string, routingKey: string, queue: string, messageId: string, body: object = { n: messageId }): Promise<void> {
  const ch = channel as unknown as amqp.ConfirmChannel;
  ch.publish(`${prefix}${exchange}`, routingKey, Buffer.from(JSON.stringify(body)), {
    persistent: true,
    messageId,
    contentType: 'application/json',
    headers: { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` },
  });
  await ch.waitForConfirms();
  const msg = await getOne(queue);
  channel.nack(msg, false, false);
  await waitForCount(`${queue}.dead`, (n) => n >= 1);
}

async function getOne(queue: string): Promise<amqp.GetMessage> {
  for (let i = 0; i < 200; i++) {
    const msg = await channel.get(`${prefix}${queue}`, { noAck: false });
    if (msg !== false) return msg;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no message in ${queue}`);
}

async function waitForCount(queue: string, ok: (n: number) => boolean): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const n = await broker.messageCount(queue);
    if (ok(n)) return n;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${queue} never reached the count`);
}

/** Takes every message of a queue off (acknowledged), in order. */
async function drain(queue: string): Promise<amqp.GetMessage[]> {
  const taken: amqp.GetMessage[] = [];
  for (;;) {
    const msg = await channel.get(`${prefix}${queue}`, { noAck: true });
    if (msg === false) return taken;
    taken.push(msg);
  }
}

async function deadLetterThreeEventsAndADeposit(): Promise<void> {
  for (const id of ['evt_1', 'evt_2', 'evt_3']) {
    await deadLetter(EXCHANGES.events, ROUTING_KEYS.eventRecorded, QUEUES.dispatcherEvents, id);
    await waitForCount(`${QUEUES.dispatcherEvents}.dead`, (n) => n === Number(id.slice(-1)));
  }
  await deadLetter(EXCHANGES.bank, ROUTING_KEYS.depositReceived, QUEUES.matcherDeposits, 'dep_1');
}

describe('dlq list', () => {
  test('when messages are dead-lettered, then each dead-letter queue shows its count and each message its id, routing key, original queue, deaths, reason and first death, and listing again finds them all still there', async () => {
    await deadLetterThreeEventsAndADeposit();

    const listed = await ops('dlq', 'list');
    const counts = { [QUEUES.dispatcherEvents]: 3, [QUEUES.matcherDeposits]: 1 };
    const queues = listed.data as { queue: string; message_count: number; messages: Record<string, unknown>[] }[];
    expect(queues.map((q) => [q.queue, q.message_count])).toEqual(Object.values(QUEUES).map((q) => [`${q}.dead`, (counts as Record<string, number>)[q] ?? 0]));
    const events = queues.find((q) => q.queue === `${QUEUES.dispatcherEvents}.dead`)!;
    expect(events.messages).toEqual(
      ['evt_1', 'evt_2', 'evt_3'].map((id) => ({
        message_id: id,
        routing_key: ROUTING_KEYS.eventRecorded,
        original_queue: QUEUES.dispatcherEvents,
        death_count: 1,
        death_reason: 'rejected',
        first_death_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
      })),
    );
    expect(Math.abs(Date.parse(String(events.messages[0]!.first_death_at)) - Date.now())).toBeLessThan(60_000);

    const limited = await ops('dlq', 'list', '--queue', QUEUES.dispatcherEvents, '--limit', '1');
    expect(limited.data).toEqual([
      expect.objectContaining({ queue: `${QUEUES.dispatcherEvents}.dead`, message_count: 3, messages: [expect.objectContaining({ message_id: 'evt_1' })] }),
    ]);
    expect(await broker.messageCount(`${QUEUES.dispatcherEvents}.dead`)).toBe(3);
    expect(await broker.messageCount(`${QUEUES.matcherDeposits}.dead`)).toBe(1);
    // Every letter is still there (a quorum queue puts a letter handed back behind the others).
    expect((await drain(`${QUEUES.dispatcherEvents}.dead`)).map((m) => m.properties.messageId).sort()).toEqual(['evt_1', 'evt_2', 'evt_3']);
  });

  test('when the prefix has no queues or a queue is unknown, then a JSON error with its exit code', async () => {
    expect(expectFailure(await runOps(NO_DATABASE, ['dlq', 'list'], { AMQP_PREFIX: 'no-such-prefix.', RABBITMQ_URL }), 3)).toMatchObject({
      code: 'resource_missing',
    });
    expect(expectFailure(await runOps(NO_DATABASE, ['dlq', 'list', '--queue', 'nope'], { AMQP_PREFIX: prefix, RABBITMQ_URL }), 2)).toMatchObject({
      code: 'usage_error',
    });
    expect(expectFailure(await runOps(NO_DATABASE, ['dlq', 'list'], { AMQP_PREFIX: prefix, RABBITMQ_URL: 'amqp://127.0.0.1:1' }), 1)).toMatchObject({
      code: 'service_unavailable',
    });
  });
});

describe('dlq replay', () => {
  test('when one message is replayed by id, then only it is back in its original queue, with its body and headers, and the others stay dead in their order', async () => {
    await deadLetterThreeEventsAndADeposit();

    const result = await ops('dlq', 'replay', '--message-id', 'evt_2');
    expect(result).toMatchObject({ object: 'dead_letter_replay', replayed: 1 });
    const [back] = await drain(QUEUES.dispatcherEvents);
    expect(back!.properties.messageId).toBe('evt_2');
    expect(JSON.parse(back!.content.toString())).toEqual({ n: 'evt_2' });
    expect(back!.properties.headers).toMatchObject({ traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` });
    expect((await drain(`${QUEUES.dispatcherEvents}.dead`)).map((m) => m.properties.messageId)).toEqual(['evt_1', 'evt_3']);
    expect(await broker.messageCount(`${QUEUES.matcherDeposits}.dead`)).toBe(1);

    expect(expectFailure(await runOps(NO_DATABASE, ['dlq', 'replay', '--message-id', 'evt_2'], { AMQP_PREFIX: prefix, RABBITMQ_URL }), 3)).toMatchObject({
      code: 'resource_missing',
      param: 'message-id',
    });
  });

  test("when a queue's dead letters are replayed, then all of them are back in it in order, and the other queues' wait for a replay of all", async () => {
    await deadLetterThreeEventsAndADeposit();

    expect(await ops('dlq', 'replay', '--queue', `${QUEUES.dispatcherEvents}.dead`)).toMatchObject({
      replayed: 3,
      queues: [{ queue: `${QUEUES.dispatcherEvents}.dead`, original_queue: QUEUES.dispatcherEvents, replayed: 3, message_ids: ['evt_1', 'evt_2', 'evt_3'] }],
    });
    expect(await broker.messageCount(`${QUEUES.matcherDeposits}.dead`)).toBe(1);
    expect((await drain(QUEUES.dispatcherEvents)).map((m) => m.properties.messageId)).toEqual(['evt_1', 'evt_2', 'evt_3']);

    expect(await ops('dlq', 'replay')).toMatchObject({ replayed: 1 });
    expect((await drain(QUEUES.matcherDeposits)).map((m) => m.properties.messageId)).toEqual(['dep_1']);
    expect((await ops('dlq', 'list')).data).toEqual(
      Object.values(QUEUES).map((q) => expect.objectContaining({ queue: `${q}.dead`, message_count: 0, messages: [] })),
    );
  });

  test('when a replayed letter dies again, then its deaths count on, and its consumer sees a first delivery', async () => {
    await deadLetter(EXCHANGES.events, ROUTING_KEYS.eventRecorded, QUEUES.dispatcherEvents, 'evt_again');
    await ops('dlq', 'replay');
    const again = await getOne(QUEUES.dispatcherEvents);
    expect(again.properties.headers?.['x-delivery-count'] ?? 0).toBe(0);
    channel.nack(again, false, false);
    await waitForCount(`${QUEUES.dispatcherEvents}.dead`, (n) => n === 1);

    const listed = await ops('dlq', 'list', '--queue', QUEUES.dispatcherEvents);
    expect(listed.data).toEqual([
      expect.objectContaining({ messages: [expect.objectContaining({ message_id: 'evt_again', death_count: 2, death_reason: 'rejected' })] }),
    ]);
  });

  test('when the original queue is gone, then the replay fails and the letters stay dead', async () => {
    await deadLetter(EXCHANGES.events, ROUTING_KEYS.eventRecorded, QUEUES.dispatcherEvents, 'evt_kept');
    await channel.deleteQueue(`${prefix}${QUEUES.dispatcherEvents}`);

    expect(expectFailure(await runOps(NO_DATABASE, ['dlq', 'replay'], { AMQP_PREFIX: prefix, RABBITMQ_URL }), 3)).toMatchObject({ code: 'resource_missing' });
    expect(await broker.messageCount(`${QUEUES.dispatcherEvents}.dead`)).toBe(1);
  });
});
