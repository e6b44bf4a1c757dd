import { randomUUID } from 'node:crypto';
import { MerchantClient, TestSystem, adapterCredentials, adapterHeaders, api, waitFor, type AdapterCredentials } from '@pmatch/testkit';

/** The orders and settings endpoints, key scopes, settings, the limits of docs/guide.md, and how bad input is answered. */

/** pg comes with the testkit; this suite has no @types/pg, so the little used here is typed by hand. */
interface SqlSession {
  connect(): Promise<void>;
  query(text: string, values?: unknown[]): Promise<unknown>;
  end(): Promise<void>;
}
const { Client } = require('pg') as { Client: new (options: { connectionString: string }) => SqlSession };

const HOUR = 60 * 60 * 1000;
const MINUTE = 60 * 1000;
let system: TestSystem;
let merchant: MerchantClient;
let orgId: string;

beforeAll(async () => {
  system = await TestSystem.start();
  ({ client: merchant, orgId } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
});

function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string, param?: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers.get('request-id'));
  if (param !== undefined) expect(res.body.error.param).toBe(param);
}

const countOrders = async () => Number((await system.sql('SELECT count(*)::int AS n FROM orders'))[0]!.n);
const countKeys = async () => Number((await system.sql('SELECT count(*)::int AS n FROM idempotency_keys'))[0]!.n);
const countEvents = async () => Number((await system.sql('SELECT count(*)::int AS n FROM events'))[0]!.n);
const body = (externalId: string, extra: Record<string, unknown> = {}) => ({
  amount: 3000,
  payer_name: 'スズキ ハナコ',
  external_id: externalId,
  item_name: 'お茶',
  ...extra,
});

describe('Idempotency-Key', () => {
  test('when the same key and body are sent again, then the original response comes back and no second order exists', async () => {
    const first = await merchant.request('POST', '/v1/orders', body('idem-1'), { 'idempotency-key': 'key-1' });
    const again = await merchant.request('POST', '/v1/orders', body('idem-1'), { 'idempotency-key': 'key-1' });

    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect((await merchant.request('GET', '/v1/orders?external_id=idem-1')).body.data).toHaveLength(1);
  });

  test('when the key is reused with another body, then 400 idempotency_key_reused and nothing is stored', async () => {
    await merchant.request('POST', '/v1/orders', body('idem-2'), { 'idempotency-key': 'key-2' });
    const before = await countOrders();

    const res = await merchant.request('POST', '/v1/orders', body('idem-3'), { 'idempotency-key': 'key-2' });

    expectError(res, 400, 'idempotency_key_reused');
    expect(await countOrders()).toBe(before);
  });

  test('when the same key is sent concurrently, then one order is created and the others replay it or are told the key is in use', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => merchant.request('POST', '/v1/orders', body('idem-4'), { 'idempotency-key': 'key-4' })));

    const created = results.filter((r) => r.status === 201);
    const inUse = results.filter((r) => r.status === 409);
    expect(created.length + inUse.length).toBe(results.length);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of inUse) expect(r.body.error.code).toBe('idempotency_key_in_use');
    expect((await merchant.request('GET', '/v1/orders?external_id=idem-4')).body.data).toHaveLength(1);
  });

  test('when a key is used by another organisation, then it is a different key', async () => {
    const { client: other } = await system.createMerchant();
    const mine = await merchant.request('POST', '/v1/orders', body('idem-5'), { 'idempotency-key': 'shared-key' });
    const theirs = await other.request('POST', '/v1/orders', body('idem-5'), { 'idempotency-key': 'shared-key' });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  test("when two keys of one organisation scoped to different accounts send the same Idempotency-Key, then each gets an order on its own account and never the other key's answer", async () => {
    // An organisation of its own: its live orders stay out of the other tests' lists.
    const org = String((await system.ops('org', 'create', '--name', '二口座商店', '--owner-email', 'owner@example.com')).id);
    const addAccount = async (number: string) => String((await system.addLiveBankAccount(org, { number, holder: 'ｽｽﾞｷｼﾖｳﾃﾝ' })).id);
    const scopedKey = async (account: string) =>
      new MerchantClient(
        system.apiUrl,
        String((await system.ops('key', 'issue', '--org', org, '--mode', 'live', '--name', account, '--bank-account', account)).key),
      );
    const [accountA, accountB] = [await addAccount('4170001'), await addAccount('4170002')];
    const [keyA, keyB] = [await scopedKey(accountA), await scopedKey(accountB)];

    // The same Idempotency-Key, each key with its own order.
    const a = await keyA.request('POST', '/v1/orders', body('scoped-a'), { 'idempotency-key': 'scoped-shared' });
    const b = await keyB.request('POST', '/v1/orders', body('scoped-b'), { 'idempotency-key': 'scoped-shared' });
    // The very same key and body as A's request: B is not answered with A's stored order (its
    // external_id is A's, on another account, so B's order conflicts).
    const sameBody = await keyB.request('POST', '/v1/orders', body('scoped-a'), { 'idempotency-key': 'scoped-shared-2' });
    const aAgain = await keyA.request('POST', '/v1/orders', body('scoped-a'), { 'idempotency-key': 'scoped-shared-2' });
    const bRepeat = await keyB.request('POST', '/v1/orders', body('scoped-a'), { 'idempotency-key': 'scoped-shared' });

    expect([a.status, b.status]).toEqual([201, 201]);
    expect([a.body.bank_account_id, b.body.bank_account_id]).toEqual([accountA, accountB]);
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expectError(sameBody, 409, 'external_id_conflict', 'external_id');
    expect(aAgain.status).toBe(200);
    expect(aAgain.body.id).toBe(a.body.id);
    expectError(bRepeat, 400, 'idempotency_key_reused');
    expect(JSON.stringify([sameBody.body, bRepeat.body])).not.toContain(a.body.id);
    const stored = await system.sql<{ api_key_id: string; account: string }>(
      `SELECT k.api_key_id, o.bank_account_id AS account FROM idempotency_keys k JOIN orders o ON o.id = k.response_body->>'id'
       WHERE k.key IN ('scoped-shared', 'scoped-shared-2') ORDER BY o.bank_account_id, k.key`,
    );
    expect(new Set(stored.map((r) => r.api_key_id)).size).toBe(2);
  });

  test('when a request holds its key while a repeat arrives, then the repeat is 409 idempotency_key_in_use, and once it ends the answer replays', async () => {
    const [account] = (await merchant.request('GET', '/v1/bank-accounts')).body.data;
    // Holding the account's row makes the first request wait inside its DB transaction, key held.
    const holder = new Client({ connectionString: system.database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM bank_accounts WHERE id = $1 FOR UPDATE', [account.id]);
    const first = merchant.request('POST', '/v1/orders', body('idem-held'), { 'idempotency-key': 'key-held' });
    await waitFor(
      async () => {
        const waiting = await system.sql(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND usename = 'pmatch_orders_api' AND wait_event_type = 'Lock'`,
        );
        return waiting.length > 0 ? true : undefined;
      },
      { what: 'the first request to wait inside its transaction' },
    );

    const repeat = await merchant.request('POST', '/v1/orders', body('idem-held'), { 'idempotency-key': 'key-held' });

    await holder.query('COMMIT');
    await holder.end();
    expectError(repeat, 409, 'idempotency_key_in_use');
    const created = await first;
    expect(created.status).toBe(201);
    const replayed = await merchant.request('POST', '/v1/orders', body('idem-held'), { 'idempotency-key': 'key-held' });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(created.body);
  });

  test('when an order is created with a key, then its stored answer commits in the same DB transaction as the order', async () => {
    const created = await merchant.request('POST', '/v1/orders', body('idem-atomic'), { 'idempotency-key': 'key-atomic' });

    const [row] = await system.sql(
      `SELECT k.response_status, k.xmin::text = o.xmin::text AS same_transaction
       FROM idempotency_keys k JOIN orders o ON o.id = k.response_body->>'id' WHERE k.key = 'key-atomic'`,
    );
    expect(created.status).toBe(201);
    expect(row).toEqual({ response_status: 201, same_transaction: true });
  });

  test('when the external_id is taken by the same order, then the 200 answer is what the key replays', async () => {
    const original = await merchant.createOrder(body('idem-200'));

    const again = await merchant.request('POST', '/v1/orders', body('idem-200'), { 'idempotency-key': 'key-200' });
    const replayed = await merchant.request('POST', '/v1/orders', body('idem-200'), { 'idempotency-key': 'key-200' });

    expect(again).toMatchObject({ status: 200, body: original });
    expect(replayed).toMatchObject({ status: 200, body: original });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });

  test('when a keyed request is refused, then nothing is stored and the corrected retry with the key runs', async () => {
    const keys = await countKeys();

    expectError(
      await merchant.request('POST', '/v1/orders', body('idem-bad', { amount: 0 }), { 'idempotency-key': 'key-bad' }),
      400,
      'parameter_invalid',
      'amount',
    );

    expect(await countKeys()).toBe(keys);
    expect((await merchant.request('POST', '/v1/orders', body('idem-bad'), { 'idempotency-key': 'key-bad' })).status).toBe(201);
  });
});

describe('external_id', () => {
  test('when an external_id is reused with other content, then 409 external_id_conflict and nothing is overwritten', async () => {
    const original = await merchant.createOrder({ external_id: 'ext-c', amount: 3100 });
    const events = await countEvents();

    const res = await merchant.request('POST', '/v1/orders', body('ext-c', { amount: 3200 }));

    expectError(res, 409, 'external_id_conflict', 'external_id');
    expect(await merchant.order(original.id)).toEqual(original);
    expect(await countEvents()).toBe(events);
  });

  test('when an external_id is reused with the same content, then 200 and the existing order', async () => {
    const original = await merchant.createOrder(body('ext-s'));
    const res = await merchant.request('POST', '/v1/orders', body('ext-s'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(original);
  });

  // Requests without a key that arrive together are written by one statement (orders-api
  // `newOrderWriter`); however they are grouped, each must be answered as if they came in turn.
  test('when POSTs with the same external_id arrive at once, then one order is created, the same content gets it with 200 and other content 409', async () => {
    const events = await countEvents();
    const sent = [body('ext-at-once'), body('ext-at-once'), body('ext-at-once', { amount: 3001 }), body('ext-at-once'), body('ext-at-once', { amount: 3002 })];

    const answers = await Promise.all(sent.map((b) => merchant.request('POST', '/v1/orders', b)));

    const created = answers.filter((res) => res.status === 201);
    expect(created).toHaveLength(1);
    const order = created[0]!.body;
    // Whichever came first is created; those alike get it, the others are refused.
    answers.forEach((res, i) => {
      if (sent[i]!.amount !== order.amount) return expectError(res, 409, 'external_id_conflict', 'external_id');
      expect([200, 201]).toContain(res.status);
      expect(res.body).toEqual(order);
    });
    expect(await system.sql("SELECT id FROM orders WHERE external_id = 'ext-at-once'")).toEqual([{ id: order.id }]);
    expect(await countEvents()).toBe(events + 1);
  });
});

describe('listing orders', () => {
  test('when orders are listed, then newest first with status and external_id filters and cursor pages', async () => {
    const { client: shop } = await system.createMerchant();
    const a = await shop.createOrder({ amount: 3301 });
    const b = await shop.createOrder({ amount: 3302 });
    const c = await shop.createOrder({ amount: 3303 });
    await shop.request('POST', `/v1/orders/${b.id}/cancel`);

    const page1 = await shop.request('GET', '/v1/orders?limit=2');
    const page2 = await shop.request('GET', `/v1/orders?limit=2&starting_after=${page1.body.data[1].id}`);
    const open = await shop.request('GET', '/v1/orders?status=open');
    const byExternal = await shop.request('GET', `/v1/orders?external_id=${a.external_id}`);

    expect(page1.body).toMatchObject({ object: 'list', has_more: true });
    expect(page1.body.data.map((o: any) => o.id)).toEqual([c.id, b.id]);
    expect(page2.body).toMatchObject({ has_more: false, data: [{ id: a.id }] });
    expect(open.body.data.map((o: any) => o.id)).toEqual([c.id, a.id]);
    expect(byExternal.body.data.map((o: any) => o.id)).toEqual([a.id]);
    expectError(await shop.request('GET', '/v1/orders?limit=101'), 400, 'parameter_invalid', 'limit');
    expectError(await shop.request('GET', '/v1/orders?starting_after=ord_unknown00000000000000'), 400, 'parameter_invalid', 'starting_after');
    expectError(await shop.request('GET', '/v1/orders?sort=asc'), 400, 'parameter_unknown', 'sort');
  });
});

describe('live keys scoped to one bank account', () => {
  test('when a key is scoped to an account, then it sees and creates only there', async () => {
    const add = (number: string) => system.addLiveBankAccount(orgId, { number, holder: 'ｽｽﾞｷ' });
    const [a, b] = [await add('3000001'), await add('3000002')];
    const all = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'all')).key));
    const scoped = new MerchantClient(
      system.apiUrl,
      String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'a', '--bank-account', String(a.id))).key),
    );
    const onB = await all.createOrder({ amount: 3401, bank_account_id: b.id });

    const created = await scoped.createOrder({ amount: 3402 });

    expect(created.bank_account_id).toBe(a.id);
    expect((await scoped.request('GET', '/v1/bank-accounts')).body.data.map((x: any) => x.id)).toEqual([a.id]);
    expectError(await scoped.request('GET', `/v1/orders/${onB.id}`), 404, 'resource_missing');
    expectError(await scoped.request('POST', '/v1/orders', body('scoped-b', { bank_account_id: b.id })), 400, 'parameter_invalid', 'bank_account_id');
    expect((await scoped.request('GET', '/v1/orders')).body.data.map((o: any) => o.id)).toEqual([created.id]);
    expectError(await all.request('POST', '/v1/orders', body('unscoped-none')), 400, 'parameter_missing', 'bank_account_id');

    const adapter = await system.ops('adapter', 'create', '--name', 'scope-adapter', '--bank-account', String(a.id), '--bank-account', String(b.id));
    const [intoA, intoB] = [await notify(adapterCredentials(adapter), String(a.id), 3402), await notify(adapterCredentials(adapter), String(b.id), 3401)];
    const createdOf = (events: any[]) => events.filter((e) => e.type === 'order.created').map((e) => e.data.object.id);
    const allEvents = await waitFor(
      async () => {
        const events = await all.events();
        return events.filter((e) => e.type === 'transaction.deposited').length === 2 ? events : undefined;
      },
      { what: 'both deposits to be decided and listed' },
    );
    const scopedEvents = await scoped.events();

    expect(createdOf(allEvents)).toEqual([onB.id, created.id]);
    expect(createdOf(scopedEvents)).toEqual([created.id]);
    expect(scopedEvents.map((e) => e.type)).toEqual(['order.created', 'transaction.deposited', 'order.paid']);
    expect(scopedEvents.every((e) => e.data.object.bank_account_id === a.id)).toBe(true);
    expect((await scoped.request('GET', '/v1/transactions')).body.data.map((t: any) => t.id)).toEqual([intoA]);
    expect((await all.request('GET', '/v1/transactions')).body.data.map((t: any) => t.id).sort()).toEqual([intoA, intoB].sort());
    expectError(await scoped.request('GET', `/v1/transactions/${intoB}`), 404, 'resource_missing');
    const eventOfB = allEvents.find((e) => e.type === 'order.created' && e.data.object.id === onB.id);
    expectError(await scoped.request('GET', `/v1/events?starting_after=${eventOfB.id}`), 400, 'parameter_invalid', 'starting_after');
  });
});

/** A deposit notification signed by a bank adapter, as bank-ingest receives it; resolves with the transaction id. */
async function notify(adapter: AdapterCredentials, bankAccountId: string, amount: number): Promise<string> {
  const notification = JSON.stringify({
    bank_account_id: bankAccountId,
    bank_reference: `ref-${randomUUID()}`,
    direction: 'deposit',
    amount,
    counterparty: 'ヤマダ タロウ',
    occurred_at: system.now().toISOString(),
  });
  const res = await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
    rawBody: notification,
    headers: { 'content-type': 'application/json', ...adapterHeaders(adapter, notification) },
  });
  if (res.status !== 202) throw new Error(`notification not accepted: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.transaction_id;
}

describe('settings', () => {
  test('when settings are read and changed, then they show the change per mode', async () => {
    const { client: shop } = await system.createMerchant();
    expect((await shop.request('GET', '/v1/settings')).body).toEqual({
      object: 'settings',
      livemode: false,
      auto_confirm_late_orders: false,
      matching_rules: [],
    });

    const changed = await shop.request('PATCH', '/v1/settings', { matching_rules: ['kana_width', 'truncated'] });

    expect(changed.body).toMatchObject({ matching_rules: ['kana_width', 'truncated'], auto_confirm_late_orders: false });
    expectError(await shop.request('PATCH', '/v1/settings', { matching_rules: ['guess'] }), 400, 'parameter_invalid', 'matching_rules.0');
    expectError(await shop.request('PATCH', '/v1/settings', { matching_rules: ['kana_width', 'kana_width'] }), 400, 'parameter_invalid', 'matching_rules');
    expect((await shop.request('GET', '/v1/settings')).body.matching_rules).toEqual(['kana_width', 'truncated']);
  });

  test('when test settings change, then live settings do not, and the other way round', async () => {
    const { client: shop, orgId: org } = await system.createMerchant();
    const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', org, '--mode', 'live', '--name', 'live')).key));

    await shop.request('PATCH', '/v1/settings', { auto_confirm_late_orders: true });
    await live.request('PATCH', '/v1/settings', { matching_rules: ['decorated'] });

    expect((await shop.request('GET', '/v1/settings')).body).toMatchObject({ livemode: false, auto_confirm_late_orders: true, matching_rules: [] });
    expect((await live.request('GET', '/v1/settings')).body).toMatchObject({ livemode: true, auto_confirm_late_orders: false, matching_rules: ['decorated'] });
  });

  test('when an organisation has no settings row, then reading them shows the defaults and writes nothing, even with a read-only key', async () => {
    const { orgId: org } = await system.createMerchant();
    await system.sql('DELETE FROM settings WHERE organisation_id = $1', [org]);
    const readOnly = new MerchantClient(
      system.apiUrl,
      String((await system.ops('key', 'issue', '--org', org, '--mode', 'test', '--name', 'ro', '--permission', 'read_only')).key),
    );

    const res = await readOnly.request('GET', '/v1/settings');

    expect(res.body).toEqual({ object: 'settings', livemode: false, auto_confirm_late_orders: false, matching_rules: [] });
    expect(await system.sql('SELECT 1 FROM settings WHERE organisation_id = $1', [org])).toEqual([]);
  });

  test('when a live key limited to one bank account changes settings, then 403 insufficient_scope and nothing changes; it may read them', async () => {
    const { orgId: org } = await system.createMerchant();
    const account = await system.addLiveBankAccount(org, { number: '5000001', holder: 'ｽｽﾞｷ' });
    const scoped = new MerchantClient(
      system.apiUrl,
      String((await system.ops('key', 'issue', '--org', org, '--mode', 'live', '--name', 'one account', '--bank-account', String(account.id))).key),
    );

    const res = await scoped.request('PATCH', '/v1/settings', { auto_confirm_late_orders: true });

    expectError(res, 403, 'insufficient_scope');
    expect(res.body.error.message).toMatch(/limited to one bank account/);
    expect((await scoped.request('GET', '/v1/settings')).body).toMatchObject({ livemode: true, auto_confirm_late_orders: false });
    expect(await system.sql('SELECT auto_confirm_late_orders FROM settings WHERE organisation_id = $1 AND mode = $2', [org, 'live'])).toEqual([
      { auto_confirm_late_orders: false },
    ]);
  });
});

describe('listing events', () => {
  test('when events are paged with limit and starting_after, then every event comes once, oldest first, and has_more tells when to stop', async () => {
    const { client: shop } = await system.createMerchant();
    const orders = [];
    for (const amount of [3501, 3502, 3503, 3504, 3505]) orders.push(await shop.createOrder({ amount }));
    await shop.request('POST', `/v1/orders/${orders[1].id}/cancel`);
    const everything = await waitFor(
      async () => {
        const page = await shop.request('GET', '/v1/events?limit=100');
        return page.body.data.length === 6 ? page.body : undefined;
      },
      { what: 'the six events to be listed' },
    );

    const page1 = await shop.request('GET', '/v1/events?limit=2');
    const page2 = await shop.request('GET', `/v1/events?limit=2&starting_after=${page1.body.data[1].id}`);
    const page3 = await shop.request('GET', `/v1/events?limit=2&starting_after=${page2.body.data[1].id}`);
    const canceled = await shop.request('GET', '/v1/events?type=order.canceled');
    const created = await shop.request('GET', `/v1/events?type=order.created&limit=3&starting_after=${page1.body.data[0].id}`);

    expect(everything.has_more).toBe(false);
    expect(everything.data.map((e: any) => [e.type, e.data.object.id])).toEqual([
      ...orders.map((o) => ['order.created', o.id]),
      ['order.canceled', orders[1].id],
    ]);
    expect([page1.body.has_more, page2.body.has_more, page3.body.has_more]).toEqual([true, true, false]);
    expect([...page1.body.data, ...page2.body.data, ...page3.body.data]).toEqual(everything.data);
    expect(canceled.body).toMatchObject({ object: 'list', has_more: false, data: [{ type: 'order.canceled' }] });
    expect(created.body.data.map((e: any) => e.data.object.id)).toEqual([orders[1].id, orders[2].id, orders[3].id]);
    expect(created.body.has_more).toBe(true);
    expectError(await shop.request('GET', '/v1/events?limit=0'), 400, 'parameter_invalid', 'limit');
    expectError(await shop.request('GET', '/v1/events?limit=101'), 400, 'parameter_invalid', 'limit');
    expectError(await shop.request('GET', '/v1/events?starting_after=evt_unknown000000000000000'), 400, 'parameter_invalid', 'starting_after');
    expectError(await merchant.request('GET', `/v1/events?starting_after=${page1.body.data[0].id}`), 400, 'parameter_invalid', 'starting_after');
  });
});

describe('limits of docs/guide.md', () => {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
  let sequence = 0;
  const create = (extra: Record<string, unknown>) => {
    sequence += 1;
    return merchant.request('POST', '/v1/orders', body(`limit-${sequence}`, extra));
  };

  test.each([
    ['amount 1', { amount: 1 }],
    ['amount 9,999,999,999', { amount: 9_999_999_999 }],
    ['payer_name of 100 characters', { payer_name: 'p'.repeat(100) }],
    ['external_id of 255 characters', { external_id: 'e'.repeat(255) }],
    ['item_name of 255 characters', { item_name: 'i'.repeat(255) }],
    ['metadata of 50 keys', { metadata: keys(50) }],
    ['a metadata key of 40 characters', { metadata: { ['k'.repeat(40)]: 'v' } }],
    ['a metadata value of 500 characters', { metadata: { k: 'v'.repeat(500) } }],
  ])('when an order has %s, at the limit, then it is created with it', async (_what, extra) => {
    const res = await create(extra);

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject(extra);
  });

  test.each([
    ['amount 0', { amount: 0 }, 'amount'],
    ['amount 10,000,000,000', { amount: 10_000_000_000 }, 'amount'],
    ['payer_name of 101 characters', { payer_name: 'p'.repeat(101) }, 'payer_name'],
    ['external_id of 256 characters', { external_id: 'e'.repeat(256) }, 'external_id'],
    ['item_name of 256 characters', { item_name: 'i'.repeat(256) }, 'item_name'],
    ['metadata of 51 keys', { metadata: keys(51) }, 'metadata'],
    ['a metadata key of 41 characters', { metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
    ['a metadata value of 501 characters', { metadata: { k: 'v'.repeat(501) } }, 'metadata.k'],
  ])('when an order has %s, beyond the limit, then 400 parameter_invalid naming it and nothing is stored', async (_what, extra, param) => {
    const before = await countOrders();

    const res = await create(extra);

    expectError(res, 400, 'parameter_invalid');
    expect(res.body.error.param).toMatch(new RegExp(`^${param.replace('.', '\\.')}`));
    expect(await countOrders()).toBe(before);
  });

  test('when payer_name carries bidirectional overrides, isolates or marks, then the order is stored without them; a name of nothing else is 400', async () => {
    const res = await create({ payer_name: '\u202eヤマダ\u2066 タロウ\u2069\u200f' });
    const before = await countOrders();
    const invisible = await create({ payer_name: '\u202e\u2066\u200f' });

    expect(res.status).toBe(201);
    expect(res.body.payer_name).toBe('ヤマダ タロウ');
    expectError(invisible, 400, 'parameter_invalid');
    expect(await countOrders()).toBe(before);
  });

  test('when ordered_at is 4 minutes ahead, then the order is created; 6 minutes ahead, then 400 ordered_at_in_future', async () => {
    const ahead = (minutes: number) => new Date(system.now().getTime() + minutes * MINUTE).toISOString();
    const [fourAhead, sixAhead] = [ahead(4), ahead(6)];

    const four = await create({ ordered_at: fourAhead });
    const six = await create({ ordered_at: sixAhead });

    expect(four.status).toBe(201);
    expect(four.body.ordered_at).toBe(fourAhead);
    expectError(six, 400, 'ordered_at_in_future', 'ordered_at');
  });
});

describe('bad input stores nothing', () => {
  const raw = (text: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    api(system.apiUrl, 'POST', '/v1/orders', { key: merchant.key, rawBody: text, headers });

  test('when the body is not JSON, an array, too deep or too large, then a clear 400/413', async () => {
    const before = await countOrders();

    expectError(await raw('{"amount": 1,'), 400, 'invalid_json');
    expectError(await raw('[1,2,3]'), 400, 'parameter_invalid');
    expectError(await raw('"text"'), 400, 'invalid_json');
    expectError(await raw(`${'['.repeat(5000)}${']'.repeat(5000)}`), 400, 'parameter_invalid');
    expectError(await raw(JSON.stringify(body('big', { item_name: 'x'.repeat(2 * 1024 * 1024) }))), 413, 'body_too_large');

    expect(await countOrders()).toBe(before);
  });

  test('when a body nests more than 32 levels, with or without Idempotency-Key, then 400 parameter_invalid and nothing is stored', async () => {
    const before = { orders: await countOrders(), keys: await countKeys() };
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    // A whole order with one more field, so that the body is `levels` deep in all.
    const deepOrder = (levels: number) => `${JSON.stringify(body(`deep-${levels}`)).slice(0, -1)},"x":${nested(levels - 1)}}`;
    const keyed = (text: string, key: string) => raw(text, { 'content-type': 'application/json', 'idempotency-key': key });

    // 32 levels are parsed (and refused for the unknown field); one more is too deep.
    expectError(await raw(deepOrder(32)), 400, 'parameter_unknown', 'x');
    expectError(await keyed(deepOrder(32), 'deep-32'), 400, 'parameter_unknown', 'x');
    for (const res of [
      await raw(deepOrder(33)),
      await keyed(deepOrder(33), 'deep-33'),
      await keyed(nested(5_000), 'deep-5000'),
      await keyed(`${'['.repeat(20_000)}${']'.repeat(20_000)}`, 'deep-array'),
    ]) {
      expectError(res, 400, 'parameter_invalid');
      expect(res.body.error.message).toMatch(/nested more than 32 levels/);
    }

    expect({ orders: await countOrders(), keys: await countKeys() }).toEqual(before);
  });

  test('when fields are missing, of the wrong type, unknown or out of bounds, then 400 naming the parameter', async () => {
    const before = await countOrders();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ payer_name: 'a', external_id: 'e', item_name: 'i' }, 'parameter_missing', 'amount'],
      [body('t1', { amount: 12.5 }), 'parameter_invalid', 'amount'],
      [body('t2', { amount: 0 }), 'parameter_invalid', 'amount'],
      [body('t3', { amount: 10_000_000_000 }), 'parameter_invalid', 'amount'],
      [body('t4', { payer_name: '   ' }), 'parameter_invalid', 'payer_name'],
      [body('t5', { payer_name: 'x'.repeat(101) }), 'parameter_invalid', 'payer_name'],
      [body('t6', { colour: 'red' }), 'parameter_unknown', 'colour'],
      [body('t7', { ordered_at: '2026-11-22 10:00' }), 'parameter_invalid', 'ordered_at'],
      [body('t8', { metadata: { k: 1 } }), 'parameter_invalid', 'metadata.k'],
      [body('t9', { bank_account_id: 'nope' }), 'parameter_invalid', 'bank_account_id'],
    ];
    for (const [input, code, param] of cases) {
      expectError(await merchant.request('POST', '/v1/orders', input), 400, code, param);
    }
    expect(await countOrders()).toBe(before);
  });

  test('when any of the four required fields is missing, then 400 parameter_missing naming it, and nothing is stored', async () => {
    const before = await countOrders();
    for (const field of ['payer_name', 'external_id', 'item_name', 'amount']) {
      const { [field]: _left, ...rest } = body(`missing-${field}`) as Record<string, unknown>;

      const res = await merchant.request('POST', '/v1/orders', rest);

      expectError(res, 400, 'parameter_missing', field);
    }
    expect(await countOrders()).toBe(before);
  });

  test('when a path id is malformed or unknown, then 404 resource_missing', async () => {
    expectError(await merchant.request('GET', '/v1/orders/not-an-id'), 404, 'resource_missing');
    expectError(await merchant.request('POST', '/v1/orders/ord_unknown00000000000000/cancel'), 404, 'resource_missing');
    expectError(await merchant.request('GET', '/v1/nothing-here'), 404, 'resource_missing');
  });

  test('when a response is sent, then /v1 has no CORS headers and errors carry no internals', async () => {
    const res = await api(system.apiUrl, 'GET', '/v1/orders', { key: merchant.key, headers: { origin: 'https://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const bad = await raw('{"amount": 1,');
    expect(JSON.stringify(bad.body)).not.toMatch(/SyntaxError|at .*\.js|node_modules/);
  });
});

describe('Idempotency-Key after 24 hours', () => {
  test('when a key is used again more than 24 hours later, then it is a new request: another body creates another order', async () => {
    const first = await merchant.request('POST', '/v1/orders', body('day-1'), { 'idempotency-key': 'key-day' });
    system.advanceClock(23 * HOUR);
    expectError(await merchant.request('POST', '/v1/orders', body('day-2'), { 'idempotency-key': 'key-day' }), 400, 'idempotency_key_reused');

    system.advanceClock(HOUR + MINUTE);
    const second = await merchant.request('POST', '/v1/orders', body('day-2'), { 'idempotency-key': 'key-day' });
    const replayed = await merchant.request('POST', '/v1/orders', body('day-2'), { 'idempotency-key': 'key-day' });

    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.external_id).toBe('day-2');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(second.body);
  });
});
