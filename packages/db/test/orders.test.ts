import { EVENTS_PER_ANNOUNCEMENT, EXCHANGES, ORDERS_PER_REGISTRATION, ROUTING_KEYS, isTransferCode } from '@pmatch/contracts';
import { DATABASE_ROLE, createTestDatabase, databaseUrlAs, statementWaitingForALock, type TestDatabase } from '@pmatch/testkit';
import {
  createDatabase,
  createPrisma,
  insertOrder,
  insertOrderUnlessExternalIdTaken,
  insertOrdersUnlessExternalIdTaken,
  isUniqueViolation,
  orderObject,
  transferCodesOffered,
  type Database,
  type LeasedMessage,
  type NewOrder,
  type PrismaClient,
} from '../src';

/**
 * The one writer of new orders, as each of its callers runs it: orders-api on plain SQL in its
 * own role, the ops CLI through Prisma in its role. Both roles are least-privilege, so these
 * statements must need nothing more than what they are granted.
 */

let db: TestDatabase;
let owner: PrismaClient;
let ordersApi: Database;
let ops: PrismaClient;
const now = new Date('2026-11-22T01:02:03.456Z');
const BASE_URL = 'https://pay.example.com';

beforeAll(async () => {
  db = await createTestDatabase();
  owner = createPrisma(db.url);
  ordersApi = createDatabase(databaseUrlAs(db.url, DATABASE_ROLE['orders-api']));
  ops = createPrisma(databaseUrlAs(db.url, DATABASE_ROLE.ops));
  await owner.organisation.create({ data: { id: 'org_orders', name: 'n', ownerEmail: 'o@example.com' } });
  await owner.bankAccount.create({
    data: { id: 'ba_orders', organisationId: 'org_orders', mode: 'test', bankCode: '0001', branchCode: '001', accountNumber: '1234567', holderName: 'h' },
  });
});

afterAll(async () => {
  await ordersApi?.prisma.$disconnect();
  await ops?.$disconnect();
  await owner?.$disconnect();
  await db?.drop();
});

const newOrder = (externalId: string, source: 'shop' | null = null): NewOrder => ({
  organisationId: 'org_orders',
  mode: 'test',
  bankAccountId: 'ba_orders',
  amount: 9_999_999_999,
  payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ',
  externalId,
  itemName: 'item',
  orderedAt: new Date('2026-11-22T00:00:00.001Z'),
  expiresAt: new Date('2026-12-06T00:00:00.002Z'),
  metadata: { zeta: 'z', a: 'it\'s "quoted"', long_key: 'ü' },
  source,
});

/** The order.created event and both outbox rows (its announcement, then order.registered) of an order first in its statement. */
async function announcementsOf(orderId: string) {
  const events = await owner.event.findMany({ where: { type: 'order.created', data: { path: ['object', 'id'], equals: orderId } } });
  const outbox = await owner.outbox.findMany({
    where: { messageId: { in: [...events.map((e) => e.id), `registered_${orderId}`] } },
    orderBy: { id: 'asc' },
  });
  return { events, outbox };
}

describe('insertOrderUnlessExternalIdTaken (orders-api, plain SQL)', () => {
  test('when the external_id is new, then the row comes back as Prisma reads it, with its event and outbox rows in the same transaction', async () => {
    const row = await ordersApi.transaction((tx) => insertOrderUnlessExternalIdTaken(tx, newOrder('ext_new'), now, BASE_URL));

    expect(row).not.toBeNull();
    expect(row).toEqual(await owner.order.findUnique({ where: { id: row!.id } }));
    expect(row).toMatchObject({
      status: 'open',
      amount: 9_999_999_999n,
      source: null,
      payment: null,
      closedAt: null,
      createdAt: now,
      updatedAt: now,
      metadata: { zeta: 'z', a: 'it\'s "quoted"', long_key: 'ü' },
    });
    const { events, outbox } = await announcementsOf(row!.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ organisationId: 'org_orders', mode: 'test', bankAccountId: 'ba_orders', createdAt: now });
    expect(events[0]!.data).toEqual({ object: orderObject(row!, BASE_URL) });
    // Not leased: written in the caller's transaction, they are for the relay to claim once it commits.
    expect(outbox.map((o) => [o.messageId, o.exchange, o.routingKey, o.leasedUntil])).toEqual([
      [events[0]!.id, EXCHANGES.events, ROUTING_KEYS.eventRecorded, null],
      [`registered_${row!.id}`, EXCHANGES.bank, ROUTING_KEYS.orderRegistered, null],
    ]);
    expect(outbox.map((o) => o.payload)).toEqual([
      { organisation_id: 'org_orders', mode: 'test', events: [{ event_id: events[0]!.id, type: 'order.created' }] },
      { orders: [{ order_id: row!.id, bank_account_id: 'ba_orders' }] },
    ]);
  });

  test('when run outside a transaction, then the order, its event and its outbox rows are written by one transaction', async () => {
    const row = await insertOrderUnlessExternalIdTaken(ordersApi.sql, newOrder('ext_alone'), now, BASE_URL);

    const { events, outbox } = await announcementsOf(row!.id);
    expect(events.map((e) => e.data)).toEqual([{ object: orderObject(row!, BASE_URL) }]);
    expect(outbox.map((o) => o.messageId)).toEqual([events[0]!.id, `registered_${row!.id}`]);
    const writers = await owner.$queryRaw<{ order_tx: string; event_tx: string; outbox_tx: string[] }[]>`
      SELECT (SELECT xmin::text FROM orders WHERE id = ${row!.id}) AS order_tx,
             (SELECT (tx_id::text::bigint % 4294967296)::text FROM events WHERE id = ${events[0]!.id}) AS event_tx,
             (SELECT array_agg(DISTINCT xmin::text) FROM outbox WHERE message_id IN (${events[0]!.id}, ${`registered_${row!.id}`})) AS outbox_tx`;
    expect(writers[0]!.event_tx).toBe(writers[0]!.order_tx);
    expect(writers[0]!.outbox_tx).toEqual([writers[0]!.order_tx]);
  });

  test('when the external_id is taken, then nothing is written, the result is null, and the transaction goes on', async () => {
    const first = await ordersApi.transaction((tx) => insertOrderUnlessExternalIdTaken(tx, newOrder('ext_taken'), now, BASE_URL));
    const before = await owner.outbox.count();

    const second = await ordersApi.transaction(async (tx) => {
      const row = await insertOrderUnlessExternalIdTaken(tx, { ...newOrder('ext_taken'), amount: 1 }, now, BASE_URL);
      // The transaction is still usable: a statement after the conflict runs.
      const again = await insertOrderUnlessExternalIdTaken(tx, newOrder('ext_after_conflict'), now, BASE_URL);
      return { row, again };
    });

    expect(second.row).toBeNull();
    expect(second.again).not.toBeNull();
    expect(await owner.order.findMany({ where: { externalId: 'ext_taken' } })).toEqual([await owner.order.findUnique({ where: { id: first!.id } })]);
    expect(await owner.outbox.count()).toBe(before + 2);
  });

  test('when two transactions insert the same external_id, then the second waits for the first and, once it commits, inserts nothing', async () => {
    let commitFirst!: () => void;
    const gate = new Promise<void>((resolve) => (commitFirst = resolve));
    let signalInserted!: () => void;
    const inserted = new Promise<void>((resolve) => (signalInserted = resolve));
    const first = ordersApi.transaction(async (tx) => {
      const row = await insertOrderUnlessExternalIdTaken(tx, newOrder('ext_race'), now, BASE_URL);
      signalInserted();
      await gate;
      return row;
    });
    await inserted;
    let secondDone = false;
    const second = ordersApi.transaction((tx) => insertOrderUnlessExternalIdTaken(tx, newOrder('ext_race'), now, BASE_URL)).finally(() => (secondDone = true));
    // The statement's text as the server shows it is cut at 1 KiB, before its INSERT: the insert of orders is the only one here to start so.
    await statementWaitingForALock(owner, 'WITH incoming AS%');

    expect(secondDone).toBe(false);
    commitFirst();
    expect(await first).not.toBeNull();
    expect(await second).toBeNull();
  });
});

describe('insertOrdersUnlessExternalIdTaken (orders-api, requests that arrive together)', () => {
  test('when orders are inserted together, then each new one comes back in the order given with its own event and messages, handed over leased, and a taken external_id writes nothing', async () => {
    const taken = await insertOrderUnlessExternalIdTaken(ordersApi.sql, newOrder('ext_batch_taken'), now, BASE_URL);
    const later = new Date(now.getTime() + 1000);
    const before = { events: await owner.event.count(), outbox: await owner.outbox.count() };
    const handedOver: LeasedMessage[][] = [];

    const rows = await insertOrdersUnlessExternalIdTaken(
      ordersApi.sql,
      [
        { order: { ...newOrder('ext_batch_b'), amount: 2 }, now },
        { order: newOrder('ext_batch_taken'), now },
        { order: { ...newOrder('ext_batch_a'), amount: 1, metadata: {} }, now: later },
        // The same external_id as the first of this batch: taken by it.
        { order: { ...newOrder('ext_batch_b'), amount: 3 }, now },
      ],
      BASE_URL,
      (messages) => handedOver.push(messages),
    );

    expect(rows.map((row) => row && [row.externalId, row.amount, row.createdAt])).toEqual([['ext_batch_b', 2n, now], null, ['ext_batch_a', 1n, later], null]);
    const [b, , a] = rows as [NonNullable<(typeof rows)[0]>, null, NonNullable<(typeof rows)[0]>, null];
    expect(a).toEqual(await owner.order.findUnique({ where: { id: a.id } }));
    expect(await owner.order.findMany({ where: { externalId: 'ext_batch_taken' } })).toEqual([await owner.order.findUnique({ where: { id: taken!.id } })]);
    const written = await Promise.all([b, a].map((row) => announcementsOf(row.id)));
    written.forEach(({ events }, i) => {
      const row = [b, a][i]!;
      expect(events.map((e) => [e.data, e.createdAt])).toEqual([[{ object: orderObject(row, BASE_URL) }, row.createdAt]]);
    });
    const [bEvent, aEvent] = written.map(({ events }) => events[0]!);
    // Two messages for the statement, not two per order: its events' announcement, then its orders' registration.
    const outbox = await owner.outbox.findMany({ where: { messageId: { in: [bEvent!.id, `registered_${b.id}`] } }, orderBy: { id: 'asc' } });
    expect(outbox.map((o) => [o.messageId, o.exchange, o.routingKey, o.payload])).toEqual([
      [
        bEvent!.id,
        EXCHANGES.events,
        ROUTING_KEYS.eventRecorded,
        { organisation_id: 'org_orders', mode: 'test', events: [bEvent!, aEvent!].map((e) => ({ event_id: e.id, type: 'order.created' })) },
      ],
      [`registered_${b.id}`, EXCHANGES.bank, ROUTING_KEYS.orderRegistered, { orders: [b, a].map((o) => ({ order_id: o.id, bank_account_id: 'ba_orders' })) }],
    ]);
    // Handed over once, after the statement: the messages as inserted, leased for the relay.
    expect(handedOver).toEqual([outbox.map((o) => ({ exchange: o.exchange, routingKey: o.routingKey, payload: o.payload, messageId: o.messageId }))]);
    expect(outbox.every((o) => o.leasedUntil !== null && o.publishedAt === null)).toBe(true);
    // Nothing else: the orders not inserted have neither events nor messages.
    expect({ events: await owner.event.count(), outbox: await owner.outbox.count() }).toEqual({ events: before.events + 2, outbox: before.outbox + 2 });
    // One transaction wrote them all, the events in the order given.
    const writers = await owner.$queryRaw<{ orders_tx: string[]; event_seq_ascending: boolean }[]>`
      SELECT (SELECT array_agg(DISTINCT xmin::text) FROM orders WHERE id IN (${b.id}, ${a.id})) AS orders_tx,
             (SELECT (SELECT seq FROM events WHERE id = ${bEvent!.id}) < (SELECT seq FROM events WHERE id = ${aEvent!.id})) AS event_seq_ascending`;
    expect(writers[0]).toEqual({ orders_tx: [expect.any(String)], event_seq_ascending: true });
  });
});

describe("insertOrdersUnlessExternalIdTaken with the caller's cached key (orders-api)", () => {
  const key = (id: string, fields: { revokedAt?: Date; permission?: string; organisationId?: string; mode?: string; bankAccountId?: string } = {}) =>
    owner.apiKey.create({
      data: { id, organisationId: 'org_orders', mode: 'test', name: id, permission: 'read_write', keyHash: `hash_${id}`, keyHint: 'h', ...fields },
    });
  const liveAccount = (id: string) =>
    owner.bankAccount.create({
      data: {
        id,
        organisationId: 'org_orders',
        mode: 'live',
        bankCode: '0001',
        branchCode: '001',
        accountNumber: id === 'ba_live_1' ? '1111111' : '2222222',
        holderName: 'h',
      },
    });

  beforeAll(async () => {
    await owner.organisation.create({ data: { id: 'org_other', name: 'n', ownerEmail: 'o@example.com' } });
    await liveAccount('ba_live_1');
    await liveAccount('ba_live_2');
    await key('key_active');
    await key('key_revoked', { revokedAt: now });
    await key('key_read_only', { permission: 'read_only' });
    await key('key_live_scoped', { mode: 'live', bankAccountId: 'ba_live_2' });
    await key('key_other_org', { organisationId: 'org_other' });
  });

  test('when orders come with the keys their callers cached, then only those whose key is active, may write, is of their organisation and mode and has the same accounts are written', async () => {
    const before = { events: await owner.event.count(), outbox: await owner.outbox.count() };
    const handedOver: LeasedMessage[][] = [];
    const asCached = (externalId: string, id: string, accountIds: string[]) => ({ order: newOrder(externalId), now, cachedKey: { id, accountIds } });

    const rows = await insertOrdersUnlessExternalIdTaken(
      ordersApi.sql,
      [
        asCached('ext_key_active', 'key_active', ['ba_orders']),
        asCached('ext_key_revoked', 'key_revoked', ['ba_orders']),
        asCached('ext_key_read_only', 'key_read_only', ['ba_orders']),
        // Cached before an account was added (or after: the scope read now differs either way).
        asCached('ext_key_stale_scope', 'key_active', []),
        asCached('ext_key_more_accounts', 'key_active', ['ba_orders', 'ba_gone']),
        {
          order: { ...newOrder('ext_key_scoped'), mode: 'live', bankAccountId: 'ba_live_2' },
          now,
          cachedKey: { id: 'key_live_scoped', accountIds: ['ba_live_2'] },
        },
        // The key's, but not of the key's mode.
        { order: { ...newOrder('ext_key_scoped_test'), bankAccountId: 'ba_live_2' }, now, cachedKey: { id: 'key_live_scoped', accountIds: ['ba_live_2'] } },
        asCached('ext_key_other_org', 'key_other_org', []),
        asCached('ext_key_unknown', 'key_unknown', ['ba_orders']),
        { order: newOrder('ext_key_none'), now },
      ],
      BASE_URL,
      (messages) => handedOver.push(messages),
    );

    expect(rows.map((row) => row?.externalId ?? null)).toEqual(['ext_key_active', null, null, null, null, 'ext_key_scoped', null, null, null, 'ext_key_none']);
    const stored = await owner.order.findMany({ where: { externalId: { startsWith: 'ext_key_' } }, select: { externalId: true } });
    expect(stored.map((o) => o.externalId).sort()).toEqual(['ext_key_active', 'ext_key_none', 'ext_key_scoped']);
    // The orders refused wrote neither events nor messages, and none of theirs were handed over.
    // Their statement's messages announce the orders written, and only those: one event.recorded per mode, one order.registered.
    expect({ events: await owner.event.count(), outbox: await owner.outbox.count() }).toEqual({ events: before.events + 3, outbox: before.outbox + 3 });
    const registered = handedOver.flat().filter((m) => m.routingKey === ROUTING_KEYS.orderRegistered);
    expect(registered.map((m) => m.payload)).toEqual([{ orders: [0, 5, 9].map((i) => ({ order_id: rows[i]!.id, bank_account_id: rows[i]!.bankAccountId })) }]);
    expect(handedOver.flat()).toHaveLength(3);
  });
});

describe('insertOrdersUnlessExternalIdTaken: the messages of a statement', () => {
  beforeAll(async () => {
    await owner.bankAccount.create({
      data: {
        id: 'ba_live_messages',
        organisationId: 'org_orders',
        mode: 'live',
        bankCode: '0001',
        branchCode: '001',
        accountNumber: '3333333',
        holderName: 'h',
      },
    });
  });

  test("when a statement writes orders of two modes, more than one message holds, then each mode's events are announced in messages of at most their size, and the orders registered in order", async () => {
    const testOrders = Array.from({ length: EVENTS_PER_ANNOUNCEMENT + 1 }, (_, i) => ({ order: newOrder(`ext_messages_${i}`), now }));
    const liveOrder = (i: number) => ({ order: { ...newOrder(`ext_messages_live_${i}`), mode: 'live' as const, bankAccountId: 'ba_live_messages' }, now });
    // Live orders second and fiftieth: the live announcement is the second message, the test one's remainder the third.
    const orders = [testOrders[0]!, liveOrder(1), ...testOrders.slice(1, 48), liveOrder(2), ...testOrders.slice(48)];
    const handedOver: LeasedMessage[][] = [];

    const rows = await insertOrdersUnlessExternalIdTaken(ordersApi.sql, orders, BASE_URL, (messages) => handedOver.push(messages));

    expect(rows.every((row) => row !== null)).toBe(true);
    const written = rows as NonNullable<(typeof rows)[0]>[];
    const events = await owner.event.findMany({
      where: { type: 'order.created', data: { path: ['object', 'external_id'], string_starts_with: 'ext_messages_' } },
      orderBy: { seq: 'asc' },
    });
    expect(events.map((e) => (e.data as { object: { id: string } }).object.id)).toEqual(written.map((row) => row.id));
    const announced = (ids: string[]) => ids.map((id) => ({ event_id: id, type: 'order.created' }));
    const eventIdsOf = (mode: string) => events.filter((e) => e.mode === mode).map((e) => e.id);
    const [testEvents, liveEvents] = [eventIdsOf('test'), eventIdsOf('live')];
    const registrations = (slice: typeof written) => ({ orders: slice.map((row) => ({ order_id: row.id, bank_account_id: row.bankAccountId })) });
    expect(handedOver).toHaveLength(1);
    expect(handedOver[0]!.map((m) => [m.messageId, m.routingKey, m.payload])).toEqual([
      [
        testEvents[0],
        ROUTING_KEYS.eventRecorded,
        { organisation_id: 'org_orders', mode: 'test', events: announced(testEvents.slice(0, EVENTS_PER_ANNOUNCEMENT)) },
      ],
      [liveEvents[0], ROUTING_KEYS.eventRecorded, { organisation_id: 'org_orders', mode: 'live', events: announced(liveEvents) }],
      [
        testEvents[EVENTS_PER_ANNOUNCEMENT],
        ROUTING_KEYS.eventRecorded,
        { organisation_id: 'org_orders', mode: 'test', events: announced(testEvents.slice(EVENTS_PER_ANNOUNCEMENT)) },
      ],
      [`registered_${written[0]!.id}`, ROUTING_KEYS.orderRegistered, registrations(written.slice(0, ORDERS_PER_REGISTRATION))],
      [`registered_${written[ORDERS_PER_REGISTRATION]!.id}`, ROUTING_KEYS.orderRegistered, registrations(written.slice(ORDERS_PER_REGISTRATION))],
    ]);
    const stored = await owner.outbox.findMany({ where: { messageId: { in: handedOver[0]!.map((m) => m.messageId) } }, orderBy: { id: 'asc' } });
    expect(stored.map((o) => ({ exchange: o.exchange, routingKey: o.routingKey, payload: o.payload, messageId: o.messageId }))).toEqual(handedOver[0]);
  });
});

describe('insertOrder (ops CLI, through Prisma)', () => {
  test('when a shop order is inserted, then it is the same kind of row, event and outbox rows as from the API, with source shop', async () => {
    const row = await insertOrder(ops, newOrder('ext_shop', 'shop'), now, BASE_URL);

    expect(row).toEqual(await owner.order.findUnique({ where: { id: row.id } }));
    expect(row).toMatchObject({ status: 'open', source: 'shop', amount: 9_999_999_999n, createdAt: now });
    const { events, outbox } = await announcementsOf(row.id);
    expect(events.map((e) => e.data)).toEqual([{ object: orderObject(row, BASE_URL) }]);
    expect(outbox.map((o) => o.messageId)).toEqual([events[0]!.id, `registered_${row.id}`]);
  });

  test('when the external_id is taken, then it fails as a unique violation and writes nothing', async () => {
    await insertOrder(ops, newOrder('ext_shop_taken', 'shop'), now, BASE_URL);
    const before = await owner.outbox.count();

    const error = await insertOrder(ops, newOrder('ext_shop_taken', 'shop'), now, BASE_URL).catch((e: unknown) => e);

    expect(isUniqueViolation(error)).toBe(true);
    expect(await owner.order.count({ where: { externalId: 'ext_shop_taken' } })).toBe(1);
    expect(await owner.outbox.count()).toBe(before);
  });
});

describe('transfer codes of new orders', () => {
  const at = new Date('2026-11-22T00:00:00Z');
  const daysBefore = (days: number) => new Date(at.getTime() - days * 86_400_000);

  /** An order of ba_orders holding `code`, open or closed at `closedAt`. */
  async function holding(code: string, closedAt: Date | null) {
    const row = await insertOrder(ops, newOrder(`held-${code}-${closedAt?.getTime() ?? 'open'}`, 'shop'), now, BASE_URL);
    await owner.order.update({ where: { id: row.id }, data: { transferCode: code, ...(closedAt === null ? {} : { status: 'canceled', closedAt }) } });
  }

  const firstFree = async (offered: string[]) =>
    (await owner.$queryRaw<{ code: string | null }[]>`SELECT first_free_transfer_code('ba_orders', ${offered}::text[], ${at}::timestamptz) AS code`)[0]!.code;

  test('when the codes offered are held by an open order or by one closed in the last 180 days, then the first free one is taken; none free gives none', async () => {
    await holding('1111114', null);
    await holding('2222229', daysBefore(179));
    await holding('3333337', daysBefore(181));

    expect(await firstFree(['1111114', '2222229', '3333337'])).toBe('3333337');
    expect(await firstFree(['1111114', '2222229'])).toBeNull();
  });

  test('when codes are offered to the orders of one statement, then no code is offered twice, so two orders of it never take one code', () => {
    // 20,000 orders of eight codes each, from 900,000: drawn independently, thousands would repeat.
    const offered = transferCodesOffered(20_000).map((codes) => codes.split(' '));
    const all = offered.flat();

    expect(offered).toHaveLength(20_000);
    expect(offered.every((codes) => codes.length === 8)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
    expect(all.every(isTransferCode)).toBe(true);
  });

  test('when two open orders of one account would hold one code, then the database refuses the second', async () => {
    await holding('4444448', null);
    const other = await insertOrder(ops, newOrder('second-holder', 'shop'), now, BASE_URL);

    const refused = await owner.order.update({ where: { id: other.id }, data: { transferCode: '4444448' } }).catch((e: unknown) => e);

    expect(isUniqueViolation(refused)).toBe(true);
  });

  test('when orders are inserted, alone or together, then each gets a valid code and its order.created event shows the same code', async () => {
    const alone = await insertOrderUnlessExternalIdTaken(ordersApi.sql, newOrder('coded-alone'), now, BASE_URL);
    const together = await insertOrdersUnlessExternalIdTaken(
      ordersApi.sql,
      ['coded-1', 'coded-2'].map((externalId) => ({ order: newOrder(externalId), now })),
      BASE_URL,
      () => undefined,
    );

    for (const row of [alone, ...together]) {
      expect(isTransferCode(row!.transferCode!)).toBe(true);
      const { events } = await announcementsOf(row!.id);
      expect((events[0]!.data as { object: { transfer_code: string } }).object.transfer_code).toBe(row!.transferCode);
    }
  });
});
