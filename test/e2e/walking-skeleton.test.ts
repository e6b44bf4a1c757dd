import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { Webhook } from 'standardwebhooks';
import { Event, Order, QUEUES, Transaction, listOf, type CreateTestDepositCommand } from '@pmatch/contracts';
import { RABBITMQ_URL, TestSystem, api, waitFor } from '@pmatch/testkit';

let system: TestSystem;
/** The deadline header of a request (DEADLINE_HEADER of packages/platform's broker, which the root package does not depend on). */
const DEADLINE_HEADER = 'x-deadline';

beforeAll(async () => {
  system = await TestSystem.start();
});

afterAll(async () => {
  await system?.stop();
});

const sql = <T extends Record<string, unknown>>(text: string, values: unknown[] = []) => system.sql<T>(text, values);

let externalIdCounter = 0;
function orderBody(overrides: Record<string, unknown> = {}) {
  externalIdCounter += 1;
  return { amount: 5000, payer_name: 'ヤマダ タロウ', external_id: `ext-${externalIdCounter}`, item_name: 'お米 5kg', ...overrides };
}

describe('one deposit end to end (test mode)', () => {
  test('when a test deposit has the amount and name of one open order, then it is confirmed and the order is paid', async () => {
    const { testKey } = await system.createMerchant();
    const created = await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: orderBody({ amount: 12800 }) });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^ord_/);
    expect(created.body.payment_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\/[0-9A-Za-z]{32}$/);
    expect(created.body.status).toBe('open');
    expect(created.body.livemode).toBe(false);

    const deposit = await api(system.apiUrl, 'POST', '/v1/test/deposits', {
      key: testKey,
      body: { amount: 12800, counterparty: 'ヤマダ タロウ' },
    });

    expect(deposit.status).toBe(201);
    expect(deposit.body).toMatchObject({ object: 'transaction', status: 'confirmed', order_id: created.body.id, amount: 12800 });
    const order = await api(system.apiUrl, 'GET', `/v1/orders/${created.body.id}`, { key: testKey });
    expect(order.body.status).toBe('paid');
    expect(order.body.closed_at).not.toBeNull();
    expect(order.body.payment).toMatchObject({
      transaction_id: deposit.body.id,
      amount: 12800,
      counterparty: 'ヤマダ タロウ',
      decided_by: 'auto',
      trigger: 'auto',
      reason: 'exact',
    });
    const events = await api(system.apiUrl, 'GET', '/v1/events', { key: testKey });
    expect(events.body.object).toBe('list');
    expect(() => listOf(Event).parse(events.body)).not.toThrow();
    expect(() => Order.parse(created.body)).not.toThrow();
    expect(() => Order.parse(order.body)).not.toThrow();
    expect(() => Transaction.parse(deposit.body)).not.toThrow();
    expect(events.body.data.map((e: { type: string }) => e.type)).toEqual(['order.created', 'transaction.deposited', 'order.paid']);
    const [created_, deposited, paid] = events.body.data;
    // data.object is a snapshot as of the event: the order.created one still shows it open.
    expect(created_.data.object).toMatchObject({ id: created.body.id, status: 'open', payment: null });
    expect(deposited.data.object).toMatchObject({ id: deposit.body.id, status: 'confirmed' });
    expect(paid.data.object).toMatchObject({ id: created.body.id, status: 'paid' });
    const onlyPaid = await api(system.apiUrl, 'GET', '/v1/events?type=order.paid', { key: testKey });
    expect(onlyPaid.body.data.map((e: { id: string }) => e.id)).toEqual([paid.id]);
  });

  test('when two open orders have the same amount and name, then the deposit is held with both as candidates', async () => {
    const { testKey } = await system.createMerchant();
    const first = await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: orderBody({ amount: 3000 }) });
    const second = await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: orderBody({ amount: 3000 }) });

    const deposit = await api(system.apiUrl, 'POST', '/v1/test/deposits', {
      key: testKey,
      body: { amount: 3000, counterparty: 'ヤマダ タロウ' },
    });

    expect(deposit.status).toBe(201);
    expect(deposit.body).toMatchObject({ status: 'held', order_id: null });
    const held = await api(system.apiUrl, 'GET', '/v1/events?type=transaction.held', { key: testKey });
    expect(held.body.data).toHaveLength(1);
    expect(held.body.data[0].data.candidate_order_ids.sort()).toEqual([first.body.id, second.body.id].sort());
    const types = (await api(system.apiUrl, 'GET', '/v1/events', { key: testKey })).body.data.map((e: { type: string }) => e.type);
    expect(types.slice(-2)).toEqual(['transaction.deposited', 'transaction.held']);
    for (const id of [first.body.id, second.body.id]) {
      expect((await api(system.apiUrl, 'GET', `/v1/orders/${id}`, { key: testKey })).body.status).toBe('open');
    }
  });

  test('when no order has the amount, then the deposit is unmatched with only transaction.deposited', async () => {
    const { testKey } = await system.createMerchant();
    await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: orderBody({ amount: 1000 }) });

    const deposit = await api(system.apiUrl, 'POST', '/v1/test/deposits', { key: testKey, body: { amount: 999, counterparty: 'ヤマダ タロウ' } });

    expect(deposit.status).toBe(201);
    expect(deposit.body.status).toBe('unmatched');
    const types = (await api(system.apiUrl, 'GET', '/v1/events', { key: testKey })).body.data.map((e: { type: string }) => e.type);
    expect(types).toEqual(['order.created', 'transaction.deposited']);
  });

  test('when three deposits for one order arrive concurrently, then exactly one is confirmed and the others are held as its possible duplicates', async () => {
    const { testKey } = await system.createMerchant();
    const order = await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: orderBody({ amount: 7777 }) });

    const deposits = await Promise.all(
      [1, 2, 3].map(() => api(system.apiUrl, 'POST', '/v1/test/deposits', { key: testKey, body: { amount: 7777, counterparty: 'ヤマダ タロウ' } })),
    );

    expect(deposits.map((d) => d.status)).toEqual([201, 201, 201]);
    const confirmed = deposits.filter((d) => d.body.status === 'confirmed');
    expect(confirmed).toHaveLength(1);
    // The same amount, name and day again: each later one is held as a possible duplicate of the first.
    const twins = deposits.filter((d) => d.body.status === 'held');
    expect(twins).toHaveLength(2);
    for (const twin of twins) expect(twin.body.decision.reason).toBe('possible_duplicate');
    const paid = await api(system.apiUrl, 'GET', `/v1/orders/${order.body.id}`, { key: testKey });
    expect(paid.body.payment.transaction_id).toBe(confirmed[0]!.body.id);
    const rows = await sql(`SELECT count(*)::int AS n FROM transactions WHERE order_id = $1`, [order.body.id]);
    expect(rows[0]!.n).toBe(1);
  });
});

describe('live bank notifications', () => {
  test('when a signed notification for a live order arrives, then it is confirmed, and the same notification again stores nothing', async () => {
    const { orgId } = await system.createMerchant();
    const account = await system.addLiveBankAccount(orgId, { bank: '0005', branch: '123', number: '7654321', holder: 'ﾃｽﾄｼﾖｳﾃﾝ' });
    const liveKey = String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'live server')).key);
    const adapter = await system.ops('adapter', 'create', '--name', 'mufg-adapter', '--bank-account', String(account.id));
    const order = await api(system.apiUrl, 'POST', '/v1/orders', {
      key: liveKey,
      body: orderBody({ amount: 21000, payer_name: 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ', ordered_at: new Date(Date.now() - 60_000).toISOString() }),
    });
    expect(order.status).toBe(201);
    expect(order.body.livemode).toBe(true);
    const notification = JSON.stringify({
      bank_account_id: account.id,
      bank_reference: `ref-${randomUUID()}`,
      direction: 'deposit',
      amount: 21000,
      counterparty: 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ',
      occurred_at: new Date().toISOString(),
    });
    const push = async () => {
      const id = `msg_${randomUUID()}`;
      const timestamp = new Date();
      const signature = new Webhook(String(adapter.secret)).sign(id, timestamp, notification);
      return api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
        rawBody: notification,
        headers: {
          'content-type': 'application/json',
          'bank-adapter-id': String(adapter.id),
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
      });
    };

    const accepted = await push();

    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ duplicate: false });
    const paid = await waitFor(
      async () => {
        const res = await api(system.apiUrl, 'GET', `/v1/orders/${order.body.id}`, { key: liveKey });
        return res.body.status === 'paid' ? res.body : undefined;
      },
      { what: 'the live order to be paid' },
    );
    expect(paid.payment).toMatchObject({ transaction_id: accepted.body.transaction_id, reason: 'exact' });

    const again = await push();

    expect(again.status).toBe(200);
    expect(again.body).toEqual({ transaction_id: accepted.body.transaction_id, duplicate: true });
    const stored = await sql(`SELECT count(*)::int AS n FROM transactions WHERE bank_account_id = $1`, [account.id]);
    expect(stored[0]!.n).toBe(1);
  });

  test('when a notification is unsigned or signed with another secret, then it is refused with 401 and nothing is stored', async () => {
    const body = JSON.stringify({
      bank_account_id: 'ba_000000000000000000000000',
      bank_reference: 'x',
      direction: 'deposit',
      amount: 1,
      counterparty: 'X',
      occurred_at: new Date().toISOString(),
    });
    const unsigned = await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
      rawBody: body,
      headers: { 'content-type': 'application/json' },
    });
    const forged = await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
      rawBody: body,
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign('msg_1', new Date(), body),
      },
    });

    expect(unsigned.status).toBe(401);
    expect(forged.status).toBe(401);
    expect(forged.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect((await sql(`SELECT count(*)::int AS n FROM transactions WHERE bank_reference = 'x'`))[0]!.n).toBe(0);
  });
});

describe('idempotent matcher', () => {
  test('when deposit.received is delivered again, then nothing changes', async () => {
    const { testKey } = await system.createMerchant();
    const order = await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: orderBody({ amount: 4321 }) });
    const deposit = await api(system.apiUrl, 'POST', '/v1/test/deposits', { key: testKey, body: { amount: 4321, counterparty: 'ヤマダ タロウ' } });
    expect(deposit.body.status).toBe('confirmed');
    const before = {
      events: await sql(`SELECT id, type FROM events ORDER BY seq`),
      transaction: await sql(`SELECT status, order_id, updated_at FROM transactions WHERE id = $1`, [deposit.body.id]),
      order: await sql(`SELECT status, payment, updated_at FROM orders WHERE id = $1`, [order.body.id]),
      outbox: await sql(`SELECT count(*)::int AS n FROM outbox`),
    };

    const connection = await amqp.connect(RABBITMQ_URL);
    try {
      const channel = await connection.createChannel();
      const { queue: replyQueue } = await channel.assertQueue('', { exclusive: true });
      const replies: unknown[] = [];
      await channel.consume(replyQueue, (msg) => msg && replies.push(JSON.parse(msg.content.toString())), { noAck: true });
      // The original message id (a broker redelivery) and a new one (a duplicate publish).
      for (const messageId of [`deposit_${deposit.body.id}`, `redelivery_${randomUUID()}`]) {
        const body = {
          transaction_id: deposit.body.id,
          bank_account_id: deposit.body.bank_account_id,
          reply_to: { queue: replyQueue, correlation_id: messageId },
        };
        channel.publish(`${system.env.AMQP_PREFIX}bank`, 'deposit.received', Buffer.from(JSON.stringify(body)), { messageId, persistent: true });
      }
      await waitFor(() => (replies.length === 2 ? true : undefined), { what: 'the matcher to handle both messages' });
      expect(replies).toEqual([
        { ok: true, transaction: expect.objectContaining({ id: deposit.body.id, status: 'confirmed' }) },
        { ok: true, transaction: expect.objectContaining({ id: deposit.body.id, status: 'confirmed' }) },
      ]);
    } finally {
      await connection.close();
    }

    expect(await sql(`SELECT id, type FROM events ORDER BY seq`)).toEqual(before.events);
    expect(await sql(`SELECT status, order_id, updated_at FROM transactions WHERE id = $1`, [deposit.body.id])).toEqual(before.transaction);
    expect(await sql(`SELECT status, payment, updated_at FROM orders WHERE id = $1`, [order.body.id])).toEqual(before.order);
    expect(await sql(`SELECT count(*)::int AS n FROM outbox`)).toEqual(before.outbox);
  });
});

describe('request deadlines', () => {
  test('when a test-deposit request reaches bank-ingest after its caller gave up, then it stores nothing and the retry stores one deposit', async () => {
    const { orgId, testKey } = await system.createMerchant();
    const [account] = await sql<{ id: string }>(`SELECT id FROM bank_accounts WHERE organisation_id = $1 AND mode = 'test' AND NOT dedicated`, [orgId]);
    const command: CreateTestDepositCommand = {
      type: 'test_deposit.create',
      organisation_id: orgId,
      bank_account_id: account!.id,
      amount: 6100,
      counterparty: 'ヤマダ タロウ',
      occurred_at: system.now().toISOString(),
    };
    const connection = await amqp.connect(RABBITMQ_URL);
    try {
      // The first attempt: its caller answered 503 and the deadline it wrote has passed (no broker
      // expiration, so only bank-ingest's check can drop it). It waits ahead of the retry.
      const channel = await connection.createConfirmChannel();
      channel.sendToQueue(`${system.env.AMQP_PREFIX}${QUEUES.bankIngestCommands}`, Buffer.from(JSON.stringify(command)), {
        messageId: `late_${randomUUID()}`,
        persistent: true,
        headers: { [DEADLINE_HEADER]: Date.now() - 1 },
      });
      await channel.waitForConfirms();
    } finally {
      await connection.close();
    }

    const retry = await api(system.apiUrl, 'POST', '/v1/test/deposits', { key: testKey, body: { amount: 6100, counterparty: 'ヤマダ タロウ' } });

    expect(retry.status).toBe(201);
    const stored = await sql<{ id: string }>(`SELECT id FROM transactions WHERE bank_account_id = $1`, [account!.id]);
    expect(stored.map((t) => t.id)).toEqual([retry.body.id]);
  });
});

describe('webhook-dispatcher', () => {
  test('when events are recorded, then the dispatcher receives each exactly once', async () => {
    const { testKey } = await system.createMerchant();
    await api(system.apiUrl, 'POST', '/v1/orders', { key: testKey, body: orderBody({ amount: 1111 }) });
    await api(system.apiUrl, 'POST', '/v1/test/deposits', { key: testKey, body: { amount: 1111, counterparty: 'ヤマダ タロウ' } });
    const eventIds = (await api(system.apiUrl, 'GET', '/v1/events', { key: testKey })).body.data.map((e: { id: string }) => e.id);

    const received = await waitFor(
      async () => {
        const rows = await sql<{ message_id: string }>(`SELECT message_id FROM inbox WHERE consumer = 'webhook-dispatcher.events' AND message_id = ANY($1)`, [
          eventIds,
        ]);
        return rows.length === eventIds.length ? rows : undefined;
      },
      { what: 'the dispatcher to record every event' },
    );

    expect(received.map((r) => r.message_id).sort()).toEqual([...eventIds].sort());
  });
});
