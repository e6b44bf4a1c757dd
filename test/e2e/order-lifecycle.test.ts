import { type MerchantClient, TestSystem, waitFor } from '@pmatch/testkit';

/** Every row of the order state table (docs/guide.md "Orders"), through the real services, time moved by the test clock. */

/** pg comes with the testkit; this suite has no @types/pg, so the little used here is typed by hand. */
interface SqlSession {
  connect(): Promise<void>;
  query(text: string, values?: unknown[]): Promise<unknown>;
  end(): Promise<void>;
}
const { Client } = require('pg') as { Client: new (options: { connectionString: string }) => SqlSession };

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
let system: TestSystem;
let merchant: MerchantClient;

beforeAll(async () => {
  system = await TestSystem.start({ RETENTION_SWEEP_INTERVAL_MS: '200' });
  ({ client: merchant } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

async function paidOrder(amount: number) {
  const order = await merchant.createOrder({ amount });
  const deposit = await merchant.deposit(amount);
  expect(deposit.status).toBe('confirmed');
  return { order: await merchant.order(order.id), deposit };
}

describe('open → paid', () => {
  test('when a person matches a held deposit to the order, then the order is paid with order.paid', async () => {
    const order = await merchant.createOrder({ amount: 1101 });
    const deposit = await merchant.deposit(1101, 'ﾍﾞﾂﾉ ﾋﾄ');
    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [order.id] });

    const matched = await merchant.request('POST', `/v1/transactions/${deposit.id}/match`, { order_id: order.id });

    expect(matched.status).toBe(200);
    expect(matched.body).toMatchObject({ id: deposit.id, status: 'confirmed', order_id: order.id });
    const paid = await merchant.order(order.id);
    expect(paid).toMatchObject({ status: 'paid', payment: { transaction_id: deposit.id, counterparty: 'ﾍﾞﾂﾉ ﾋﾄ', amount: 1101 } });
    const last = (await merchant.events()).at(-1);
    expect(last).toMatchObject({ type: 'order.paid', data: { object: { id: order.id, status: 'paid' } } });
  });

  test('when an open order is marked paid, then it is paid_outside with no transaction and order.paid', async () => {
    const order = await merchant.createOrder({ amount: 1102 });
    const paidAt = new Date(system.now().getTime() - HOUR).toISOString();

    const res = await merchant.request('POST', `/v1/orders/${order.id}/mark-paid`, { paid_at: paidAt });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'paid_outside', payment: { transaction_id: null, amount: 1102, occurred_at: paidAt } });
    expect(res.body.closed_at).not.toBeNull();
    const event = (await merchant.events('order.paid')).find((e) => e.data.object.id === order.id);
    expect(event.data.object).toMatchObject({ status: 'paid_outside', payment: { transaction_id: null } });
  });

  test('when mark-paid is asked for a paid order or with a future paid_at, then it is refused and nothing changes', async () => {
    const { order } = await paidOrder(1107);
    const open = await merchant.createOrder({ amount: 1108 });

    expectError(await merchant.request('POST', `/v1/orders/${order.id}/mark-paid`, {}), 409, 'order_not_open');
    const future = new Date(system.now().getTime() + HOUR).toISOString();
    expectError(await merchant.request('POST', `/v1/orders/${open.id}/mark-paid`, { paid_at: future }), 400, 'parameter_invalid');
    expect((await merchant.order(order.id)).status).toBe('paid');
    expect((await merchant.order(open.id)).status).toBe('open');
  });
});

describe('cancel', () => {
  test('when an open order is canceled, then it is canceled with order.canceled', async () => {
    const order = await merchant.createOrder({ amount: 1105 });

    const res = await merchant.request('POST', `/v1/orders/${order.id}/cancel`);

    expect(res.status).toBe(200);
    expect(res.body.status).toBe('canceled');
    expect(res.body.closed_at).not.toBeNull();
    expect((await merchant.events('order.canceled')).map((e) => e.data.object.id)).toContain(order.id);
  });

  test('when a paid order is canceled, then 409 order_not_open: it must be reversed first', async () => {
    const { order } = await paidOrder(1109);

    expectError(await merchant.request('POST', `/v1/orders/${order.id}/cancel`), 409, 'order_not_open');
    expect((await merchant.order(order.id)).status).toBe('paid');
  });

  test('when the order expires between the cancel reading it and changing it, then it is canceled and keeps the moment it expired', async () => {
    const order = await merchant.createOrder({ amount: 1120 });
    const expiredAt = new Date(system.now().getTime() - 1000).toISOString();
    // The order's row is held, so the cancel reads it open and then waits to change it.
    const holder = new Client({ connectionString: system.database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [order.id]);
    const cancel = merchant.request('POST', `/v1/orders/${order.id}/cancel`);
    await waitFor(
      async () => {
        const waiting = await system.sql(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND usename = 'pmatch_orders_api' AND wait_event_type = 'Lock'`,
        );
        return waiting.length > 0 ? true : undefined;
      },
      { what: 'the cancel to wait for the order row' },
    );

    // Meanwhile the order expires, as the matcher's sweeper does it.
    await holder.query(`UPDATE orders SET status = 'expired', closed_at = $2 WHERE id = $1`, [order.id, expiredAt]);
    await holder.query('COMMIT');
    await holder.end();
    const res = await cancel;

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'canceled', closed_at: expiredAt });
    const canceled = (await merchant.events('order.canceled')).find((e) => e.data.object.id === order.id);
    expect(canceled.data.object).toMatchObject({ status: 'canceled', closed_at: expiredAt });
  });
});

describe('PATCH', () => {
  test('when amount, payer_name and metadata change, then the order shows them with order.updated; {} clears metadata', async () => {
    const order = await merchant.createOrder({ amount: 1110, metadata: { a: '1', b: '2' } });

    const changed = await merchant.request('PATCH', `/v1/orders/${order.id}`, { amount: 1111, payer_name: 'サトウ ジロウ', metadata: { c: '3' } });
    const cleared = await merchant.request('PATCH', `/v1/orders/${order.id}`, { metadata: {} });

    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ amount: 1111, payer_name: 'サトウ ジロウ', metadata: { c: '3' } });
    expect(cleared.body).toMatchObject({ amount: 1111, payer_name: 'サトウ ジロウ', metadata: {} });
    const updates = (await merchant.events('order.updated')).filter((e) => e.data.object.id === order.id);
    expect(updates.map((e) => e.data.object.metadata)).toEqual([{ c: '3' }, {}]);
  });

  test('when an order changes, then deposits already received are not re-examined; the next deposit uses the change', async () => {
    const order = await merchant.createOrder({ amount: 1112 });
    // Under another name than the next one: the same amount, name and day would make it a possible duplicate.
    const before = await merchant.deposit(1113, 'ｽｽﾞｷ ｲﾁﾛｳ');
    expect(before.status).toBe('unmatched');

    await merchant.request('PATCH', `/v1/orders/${order.id}`, { amount: 1113 });
    // Whatever the change might have set off in the background has run once the matcher has
    // handled an order registered after it.
    const marker = await merchant.createOrder({ amount: 1124 });
    await system.processed('matcher.late-orders', `registered_${marker.id}`);

    expect((await merchant.transaction(before.id)).status).toBe('unmatched');
    expect((await merchant.events()).filter((e) => e.data.object.id === before.id).map((e) => e.type)).toEqual(['transaction.deposited']);
    const after = await merchant.deposit(1113);
    expect(after).toMatchObject({ status: 'confirmed', order_id: order.id });
  });

  test('when a paid order is patched, then 409 order_not_open', async () => {
    const { order } = await paidOrder(1114);
    expectError(await merchant.request('PATCH', `/v1/orders/${order.id}`, { amount: 5 }), 409, 'order_not_open');
    expect((await merchant.order(order.id)).amount).toBe(1114);
  });

  test('when PATCH has no changeable field or an unknown one, then 400 and nothing changes', async () => {
    const order = await merchant.createOrder({ amount: 1115 });
    expectError(await merchant.request('PATCH', `/v1/orders/${order.id}`, {}), 400, 'parameter_missing');
    expectError(await merchant.request('PATCH', `/v1/orders/${order.id}`, { item_name: 'x' }), 400, 'parameter_unknown');
    expect((await merchant.order(order.id)).item_name).toBe(order.item_name);
  });
});

describe('reverse', () => {
  test('when a paid order is reversed within 24 hours, then it is open, the deposit unmatched, and order.payment_reversed carries the previous payment', async () => {
    const { order, deposit } = await paidOrder(1106);
    system.advanceClock(23 * HOUR);

    const res = await merchant.request('POST', `/v1/orders/${order.id}/reverse`);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'open', payment: null, closed_at: null });
    expect(await merchant.transaction(deposit.id)).toMatchObject({ status: 'unmatched', order_id: null });
    const reversed = (await merchant.events('order.payment_reversed')).find((e) => e.data.object.id === order.id);
    expect(reversed.data.object.status).toBe('open');
    expect(reversed.data.previous_payment).toEqual(order.payment);
  });

  test('when a paid order is reversed more than 24 hours after confirmation, then 409 reverse_window_passed and it stays paid', async () => {
    const { order, deposit } = await paidOrder(1116);
    system.advanceClock(24 * HOUR + 60_000);

    expectError(await merchant.request('POST', `/v1/orders/${order.id}/reverse`), 409, 'reverse_window_passed');
    expect((await merchant.order(order.id)).status).toBe('paid');
    expect((await merchant.transaction(deposit.id)).status).toBe('confirmed');
  });

  test('when an open order is reversed, then 409 order_not_open', async () => {
    const order = await merchant.createOrder({ amount: 1117 });
    expectError(await merchant.request('POST', `/v1/orders/${order.id}/reverse`), 409, 'order_not_open');
  });
});

describe('expiry', () => {
  test('when expires_at passes, then the order is expired with order.expired; a deposit for it is only held; it can still be canceled', async () => {
    const order = await merchant.createOrder({ amount: 1103, expires_at: new Date(system.now().getTime() + HOUR).toISOString() });
    const defaulted = await merchant.createOrder({ amount: 1118 });

    system.advanceClock(2 * HOUR);

    const expired = await waitFor(
      async () => {
        const current = await merchant.order(order.id);
        return current.status === 'expired' ? current : undefined;
      },
      { what: 'the order to expire' },
    );
    expect(expired.closed_at).toBe(order.expires_at);
    expect((await merchant.events('order.expired')).map((e) => e.data.object.id)).toContain(order.id);
    expect((await merchant.order(defaulted.id)).status).toBe('open');

    const deposit = await merchant.deposit(1103);
    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [order.id] });

    const canceled = await merchant.request('POST', `/v1/orders/${order.id}/cancel`);
    expect(canceled.body).toMatchObject({ status: 'canceled', closed_at: order.expires_at });
  });

  test('when 14 days pass after registration without expires_at, then the order expires', async () => {
    const order = await merchant.createOrder({ amount: 1119 });
    system.advanceClock(14 * 24 * HOUR + 60_000);
    await waitFor(async () => ((await merchant.order(order.id)).status === 'expired' ? true : undefined), { what: 'the 14-day expiry' });
  });
});

describe('retention', () => {
  test('when idempotency keys are older than 24 hours, then the sweep deletes them and keeps younger ones', async () => {
    const keyed = (key: string) =>
      merchant.request('POST', '/v1/orders', { amount: 1125, payer_name: 'p', external_id: key, item_name: 'i' }, { 'idempotency-key': key });
    const keys = async () => (await system.sql<{ key: string }>(`SELECT key FROM idempotency_keys WHERE key LIKE 'sweep-%' ORDER BY key`)).map((r) => r.key);
    expect((await keyed('sweep-old')).status).toBe(201);
    system.advanceClock(25 * HOUR);
    expect((await keyed('sweep-young')).status).toBe(201);

    const left = await waitFor(
      async () => {
        const now = await keys();
        return now.includes('sweep-old') ? undefined : now;
      },
      { what: 'the sweep to delete the old key' },
    );

    expect(left).toEqual(['sweep-young']);
  });

  test('when events are 31 days old, then they are deleted, and events 29 days old are kept', async () => {
    const older = await merchant.createOrder({ amount: 1121 });
    system.advanceClock(2 * DAY);
    const younger = await merchant.createOrder({ amount: 1123 });
    const createdOf = (id: string) => (events: any[]) => events.some((e) => e.type === 'order.created' && e.data.object.id === id);
    await waitFor(async () => (createdOf(younger.id)(await merchant.events()) ? true : undefined), { what: 'the younger event to be listed' });

    system.advanceClock(29 * DAY);

    const remaining = await waitFor(
      async () => {
        const events = await merchant.events();
        return createdOf(older.id)(events) ? undefined : events;
      },
      { what: 'the event 31 days old to be deleted' },
    );
    expect(createdOf(younger.id)(remaining)).toBe(true);
    expect(remaining.every((e) => new Date(e.created_at).getTime() >= system.now().getTime() - 30 * DAY)).toBe(true);
  });
});
