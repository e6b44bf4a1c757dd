import { randomBytes, randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { QUEUES, newId } from '@pmatch/contracts';
import { type MerchantClient, RABBITMQ_URL, TestSystem, waitFor, type ServiceName } from '@pmatch/testkit';
import { HttpsReceiver } from '../../services/webhook-dispatcher/test/support/receiver';
import { TestCa } from '../../services/webhook-dispatcher/test/support/tls';

/**
 * Messages that name another seller's rows, published straight to the real exchanges and queues
 * with the real routing keys, as a compromised or buggy publisher could: every consumer that acts
 * on ids from messages checks them against the rows, changes nothing, acknowledges the message and
 * counts it (pmatch_messages_out_of_scope_total). The genuine message afterwards still acts, so it
 * is the check that stopped the forged one.
 */

let system: TestSystem;
let ca: TestCa;
let receiver: HttpsReceiver;
let connection: ChannelModel;
let channel: Channel;
/** The organisation the forged messages claim to be about (the forger's). */
let mine: { orgId: string; client: MerchantClient; accountId: string; endpointId: string; hookPath: string };
/** The organisation whose rows they name. */
let theirs: { orgId: string; client: MerchantClient; accountId: string };

const sql = <T extends Record<string, unknown>>(text: string, values: unknown[] = []) => system.sql<T>(text, values);

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  system = await TestSystem.start({ WEBHOOK_CA_FILE: ca.certFile, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', DELIVERY_POLL_INTERVAL_MS: '100' });
  connection = await amqp.connect(RABBITMQ_URL);
  channel = await connection.createChannel();
  const a = await system.createMerchant({ name: 'Mine' });
  const b = await system.createMerchant({ name: 'Theirs' });
  const hookPath = '/forged/mine';
  const endpoint = await a.client.request('POST', '/v1/webhook-endpoints', { url: receiver.url(hookPath) });
  expect(endpoint.status).toBe(201);
  mine = { orgId: a.orgId, client: a.client, accountId: await accountOf(a.client), endpointId: endpoint.body.id, hookPath };
  theirs = { orgId: b.orgId, client: b.client, accountId: await accountOf(b.client) };
});

afterAll(async () => {
  await connection?.close().catch(() => undefined);
  await system?.stop();
  await receiver?.close();
  ca?.remove();
});

/** The organisation's test bank account: the one its orders go to. */
async function accountOf(client: MerchantClient): Promise<string> {
  const order = await client.createOrder({ amount: 100 + Math.floor(Math.random() * 800) });
  const [row] = await sql<{ bank_account_id: string }>('SELECT bank_account_id FROM orders WHERE id = $1', [order.id]);
  return row!.bank_account_id;
}

function publish(exchange: 'bank' | 'events', routingKey: string, body: unknown): string {
  const messageId = randomUUID();
  channel.publish(`${system.env.AMQP_PREFIX}${exchange}`, routingKey, Buffer.from(JSON.stringify(body)), { messageId, persistent: true });
  return messageId;
}

function outOfScopeCount(text: string, queue: string): number {
  const line = text.split('\n').find((l) => l.startsWith('pmatch_messages_out_of_scope_total{') && l.includes(`queue="${queue}"`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** Runs `forge`, then waits until the service has counted one more out-of-scope message (or item) on the queue. */
async function refused(service: ServiceName, queue: string, forge: () => unknown, count = 1): Promise<void> {
  const before = outOfScopeCount(await system.metrics(service), queue);
  await forge();
  await waitFor(async () => (outOfScopeCount(await system.metrics(service), queue) >= before + count ? true : undefined), {
    what: `${service} to refuse ${count} message(s) on ${queue}`,
  });
  await waitFor(async () => ((await system.queueState(queue)).ready === 0 ? true : undefined), { what: `${queue} to be empty` });
}

/** An open order written straight to the database, so that no message announces it. */
async function unannouncedOrder(orgId: string, accountId: string, amount: number): Promise<string> {
  const id = newId('order');
  await sql(
    `INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token)
     VALUES ($1, $2, 'test', $3, 'open', $4, 'ヤマダ タロウ', $5, 'item', now() - interval '1 hour', now() + interval '7 days', $6)`,
    [id, orgId, accountId, amount, `ext-${id}`, randomBytes(16).toString('hex')],
  );
  return id;
}

/** A pending deposit written straight to the database, so that no message announces it. */
async function unannouncedDeposit(orgId: string, accountId: string, amount: number): Promise<string> {
  const id = newId('transaction');
  await sql(
    `INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
     VALUES ($1, $2, 'test', $3, $4, 'deposit', 'pending', $5, 'ヤマダ タロウ', now())`,
    [id, orgId, accountId, `ref-${id}`, amount],
  );
  return id;
}

const statusOf = async (table: 'orders' | 'transactions', id: string) =>
  (await sql<{ status: string }>(`SELECT status FROM ${table} WHERE id = $1`, [id]))[0]?.status;

describe('forged messages to the matcher', () => {
  test('when deposit.received names their pending deposit with my bank account, then it stays pending; the genuine message confirms it', async () => {
    const order = await theirs.client.createOrder({ amount: 7100, payer_name: 'ヤマダ タロウ' });
    const deposit = await unannouncedDeposit(theirs.orgId, theirs.accountId, 7100);

    await refused('matcher', QUEUES.matcherDeposits, () => publish('bank', 'deposit.received', { transaction_id: deposit, bank_account_id: mine.accountId }));
    await refused('matcher', QUEUES.matcherDeposits, () =>
      publish('bank', 'deposit.received', { transaction_id: newId('transaction'), bank_account_id: mine.accountId }),
    );

    expect(await statusOf('transactions', deposit)).toBe('pending');
    expect(await statusOf('orders', order.id)).toBe('open');
    publish('bank', 'deposit.received', { transaction_id: deposit, bank_account_id: theirs.accountId });
    await waitFor(async () => ((await statusOf('orders', order.id)) === 'paid' ? true : undefined), { what: 'the genuine message to confirm it' });
  });

  test('when order.registered names their order with my bank account, then their unmatched deposit stays unmatched; the genuine message holds it', async () => {
    const deposit = await theirs.client.deposit(7200, 'スズキ ハナコ');
    expect(deposit.status).toBe('unmatched');
    const order = await unannouncedOrder(theirs.orgId, theirs.accountId, 7200);

    await refused('matcher', QUEUES.matcherLateOrders, () =>
      publish('bank', 'order.registered', { orders: [{ order_id: order, bank_account_id: mine.accountId }] }),
    );

    expect(await statusOf('transactions', deposit.id)).toBe('unmatched');
    expect(await sql('SELECT 1 FROM inbox WHERE message_id = $1', [`registered_${order}`])).toHaveLength(0);
    publish('bank', 'order.registered', { orders: [{ order_id: order, bank_account_id: theirs.accountId }] });
    await waitFor(async () => ((await statusOf('transactions', deposit.id)) === 'held' ? true : undefined), { what: 'the genuine message to hold it' });
  });

  test('when a command in my organisation names their order or deposit, then it is answered as missing and changes nothing', async () => {
    const order = await theirs.client.createOrder({ amount: 7300 });
    const deposit = await theirs.client.deposit(7400, 'スズキ ハナコ');
    /** A request as orders-api sends one (direct reply-to), on a channel of its own; resolves with the reply. */
    const request = async (command: Record<string, unknown>): Promise<any> => {
      const requests = await connection.createChannel();
      try {
        const reply = new Promise<any>((resolve) => {
          void requests.consume('amq.rabbitmq.reply-to', (msg) => msg && resolve(JSON.parse(msg.content.toString('utf8'))), { noAck: true });
        });
        requests.sendToQueue(`${system.env.AMQP_PREFIX}${QUEUES.matcherCommands}`, Buffer.from(JSON.stringify(command)), {
          messageId: randomUUID(),
          correlationId: randomUUID(),
          replyTo: 'amq.rabbitmq.reply-to',
        });
        return await reply;
      } finally {
        await requests.close();
      }
    };
    const scope = { organisation_id: mine.orgId, mode: 'test', trigger: 'api' };

    let answers: any[] = [];
    await refused(
      'matcher',
      QUEUES.matcherCommands,
      async () => {
        answers.push(await request({ type: 'order.mark_paid', ...scope, order_id: order.id }));
        answers.push(await request({ type: 'transaction.exclude', ...scope, transaction_id: deposit.id }));
      },
      2,
    );

    answers = answers.map((a) => a.error?.code);
    expect(answers).toEqual(['resource_missing', 'resource_missing']);
    expect(await statusOf('orders', order.id)).toBe('open');
    expect(await statusOf('transactions', deposit.id)).toBe('unmatched');
  });
});

describe('forged messages to the webhook dispatcher', () => {
  async function theirEvent(): Promise<{ id: string; type: string }> {
    const order = await theirs.client.createOrder({ amount: 7500 });
    const [event] = await sql<{ id: string; type: string }>(
      "SELECT id, type FROM events WHERE organisation_id = $1 AND type = 'order.created' AND data->'object'->>'id' = $2",
      [theirs.orgId, order.id],
    );
    return event!;
  }
  const deliveriesTo = async (endpointId: string, eventId: string) =>
    (await sql('SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2', [endpointId, eventId])).length;

  test('when event.recorded claims their event for my organisation, then my endpoint gets no delivery of it', async () => {
    const event = await theirEvent();

    await refused('webhook-dispatcher', QUEUES.dispatcherEvents, () =>
      publish('events', 'event.recorded', { organisation_id: mine.orgId, mode: 'test', events: [{ event_id: event.id, type: event.type }] }),
    );

    expect(await deliveriesTo(mine.endpointId, event.id)).toBe(0);
  });

  test('when webhook.resend names my endpoint and their event, then no delivery is made', async () => {
    const event = await theirEvent();

    await refused('webhook-dispatcher', QUEUES.dispatcherRequests, () =>
      publish('events', 'webhook.requested', { type: 'webhook.resend', endpoint_id: mine.endpointId, event_id: event.id }),
    );

    expect(await deliveriesTo(mine.endpointId, event.id)).toBe(0);
  });

  test('when webhook.send_test carries an event that is no test event, then my endpoint is sent nothing signed', async () => {
    const event = {
      id: newId('event'),
      object: 'event',
      type: 'webhook.test',
      livemode: true,
      created_at: new Date().toISOString(),
      data: { object: { message: 'forged' } },
    };

    await refused('webhook-dispatcher', QUEUES.dispatcherRequests, () =>
      publish('events', 'webhook.requested', { type: 'webhook.send_test', endpoint_id: mine.endpointId, event }),
    );

    expect(receiver.requestsTo(mine.hookPath).filter((r) => r.headers['webhook-id'] === event.id)).toHaveLength(0);
  });
});
