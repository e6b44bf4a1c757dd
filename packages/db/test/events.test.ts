import { EVENTS_PER_ANNOUNCEMENT, EXCHANGES, EventsRecorded, ROUTING_KEYS, type NewEvent } from '@pmatch/contracts';
import { DATABASE_ROLE, createTestDatabase, databaseUrlAs, type TestDatabase } from '@pmatch/testkit';
import {
  createDatabase,
  createPrisma,
  enqueueAll,
  outboxInsert,
  outboxValues,
  recordEvents,
  sql,
  preparedQuery,
  type OutboxValues,
  type PrismaClient,
} from '../src';

let db: TestDatabase;
let prisma: PrismaClient;
const at = new Date('2026-11-22T01:02:03.456Z');

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url);
  await prisma.organisation.create({ data: { id: 'org_events', name: 'n', ownerEmail: 'o@example.com' } });
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const scope = { organisationId: 'org_events', mode: 'test' as const, bankAccountId: null, at };

describe('recordEvents', () => {
  test('when many events are recorded in one call, then their seq increases in the order given, and one outbox row announces them all', async () => {
    const types = ['transaction.deposited', 'order.paid', 'transaction.held', 'order.expired'];
    const events: NewEvent[] = Array.from({ length: 40 }, (_, i) => ({ type: types[i % types.length], data: { object: { i } } }) as unknown as NewEvent);

    const ids = await prisma.$transaction((tx) => recordEvents(tx, scope, events));

    const stored = await prisma.event.findMany({ where: { id: { in: ids } }, orderBy: { seq: 'asc' } });
    expect(stored.map((e) => e.id)).toEqual(ids);
    expect(stored.map((e) => (e.data as { object: { i: number } }).object.i)).toEqual(events.map((_, i) => i));
    expect(stored.map((e) => e.type)).toEqual(events.map((e) => e.type));
    expect(stored.every((e) => e.createdAt.getTime() === at.getTime() && e.organisationId === 'org_events' && e.mode === 'test')).toBe(true);
    const outbox = await prisma.outbox.findMany({ where: { messageId: { in: ids } }, orderBy: { id: 'asc' } });
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({ messageId: ids[0], exchange: EXCHANGES.events, routingKey: ROUTING_KEYS.eventRecorded, publishedAt: null });
    expect(EventsRecorded.parse(outbox[0]!.payload)).toEqual({
      organisation_id: 'org_events',
      mode: 'test',
      events: ids.map((id, i) => ({ event_id: id, type: events[i]!.type })),
    });
  });

  test('when more events are recorded than one message may announce, then each full slice gets its own message, in order', async () => {
    const count = 2 * EVENTS_PER_ANNOUNCEMENT + 1;
    const events = Array.from({ length: count }, () => ({ type: 'order.expired', data: { object: {} } }) as unknown as NewEvent);

    const ids = await prisma.$transaction((tx) => recordEvents(tx, scope, events));

    const outbox = await prisma.outbox.findMany({ where: { messageId: { in: ids } }, orderBy: { id: 'asc' } });
    const announced = outbox.map((o) => EventsRecorded.parse(o.payload).events.map((e) => e.event_id));
    expect(outbox.map((o) => o.messageId)).toEqual([ids[0], ids[EVENTS_PER_ANNOUNCEMENT], ids[2 * EVENTS_PER_ANNOUNCEMENT]]);
    expect(announced.map((slice) => slice.length)).toEqual([EVENTS_PER_ANNOUNCEMENT, EVENTS_PER_ANNOUNCEMENT, 1]);
    expect(announced.flat()).toEqual(ids);
  });

  test('when other messages go with the events, then they are queued after the outbox rows of the events, in the same transaction', async () => {
    const other = { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.orderRegistered, payload: { order_id: 'ord_x' }, messageId: 'registered_ord_x' };

    const ids = await prisma.$transaction((tx) => recordEvents(tx, scope, [{ type: 'order.created', data: { object: {} } } as unknown as NewEvent], [other]));

    const outbox = await prisma.outbox.findMany({ where: { messageId: { in: [...ids, other.messageId] } }, orderBy: { id: 'asc' } });
    expect(outbox.map((o) => o.messageId)).toEqual([...ids, other.messageId]);
    expect(outbox[1]).toMatchObject({ exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.orderRegistered, payload: other.payload });
  });

  test('when later calls record more events, then their seq follows the earlier ones', async () => {
    const first = await prisma.$transaction((tx) => recordEvents(tx, scope, [{ type: 'order.expired', data: { object: {} } } as unknown as NewEvent]));
    const second = await prisma.$transaction((tx) => recordEvents(tx, scope, [{ type: 'order.expired', data: { object: {} } } as unknown as NewEvent]));

    const stored = await prisma.event.findMany({ where: { id: { in: [...first, ...second] } }, orderBy: { seq: 'asc' } });
    expect(stored.map((e) => e.id)).toEqual([...first, ...second]);
  });

  test('when the DB transaction rolls back, then neither the events nor their outbox rows remain', async () => {
    let ids: string[] = [];
    await expect(
      prisma.$transaction(async (tx) => {
        ids = await recordEvents(tx, scope, [{ type: 'order.expired', data: { object: {} } } as unknown as NewEvent]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');

    expect(ids).toHaveLength(1);
    expect(await prisma.event.count({ where: { id: { in: ids } } })).toBe(0);
    expect(await prisma.outbox.count({ where: { messageId: { in: ids } } })).toBe(0);
  });

  test('when there are no events, then nothing is written', async () => {
    const before = await prisma.event.count();
    expect(await prisma.$transaction((tx) => recordEvents(tx, scope, []))).toEqual([]);
    expect(await prisma.event.count()).toBe(before);
  });
});

describe('enqueueAll', () => {
  test('when several messages are queued, then each gets its row in order, with a message id of its own when none is given', async () => {
    await prisma.$transaction((tx) =>
      enqueueAll(tx, [
        { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived, payload: { n: 1 }, messageId: 'enqueue-all-1' },
        { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.orderRegistered, payload: { n: 2 } },
      ]),
    );

    const rows = await prisma.outbox.findMany({ where: { OR: [{ messageId: 'enqueue-all-1' }, { payload: { equals: { n: 2 } } }] }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => r.payload)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(rows[1]?.messageId).toMatch(/^msg_[0-9A-Za-z]{24}$/);
    expect(rows[1]?.routingKey).toBe(ROUTING_KEYS.orderRegistered);
  });
});

describe('outboxInsert', () => {
  test('when it is part of a larger statement, then its rows are inserted only under its condition, from parameters where it is told', async () => {
    const database = createDatabase(db.url, { poolSize: 1 });
    const guarded = preparedQuery<OutboxValues & { wanted: boolean }>(
      'test.guarded_outbox',
      (p) => sql`WITH wanted AS (SELECT 1 WHERE ${p.wanted}::boolean) ${outboxInsert(p, 'EXISTS (SELECT FROM wanted)')}`,
    );
    const message = (messageId: string) => ({ exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived, payload: { messageId }, messageId });
    try {
      expect(await database.sql.count(guarded, { wanted: false, ...outboxValues([message('guarded-no')]) })).toBe(0);
      expect(await database.sql.count(guarded, { wanted: true, ...outboxValues([message('guarded-yes-1'), message('guarded-yes-2')]) })).toBe(2);
    } finally {
      await database.prisma.$disconnect();
    }

    const rows = await prisma.outbox.findMany({ where: { messageId: { startsWith: 'guarded-' } }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => [r.messageId, r.payload])).toEqual([
      ['guarded-yes-1', { messageId: 'guarded-yes-1' }],
      ['guarded-yes-2', { messageId: 'guarded-yes-2' }],
    ]);
  });
});

describe("recording events as the services' own database roles", () => {
  test.each(['orders-api', 'bank-ingest', 'matcher'] as const)(
    'when %s records events through plain SQL and through Prisma, then its role may (it inserts events without reading them)',
    async (service) => {
      const asService = createDatabase(databaseUrlAs(db.url, DATABASE_ROLE[service]), { poolSize: 1 });
      try {
        const event = { type: 'order.created', data: { object: {} } } as unknown as NewEvent;
        const viaSql = await asService.transaction((tx) => recordEvents(tx, scope, [event]));
        const viaPrisma = await asService.prisma.$transaction((tx) => recordEvents(tx, scope, [event]));

        expect(await prisma.event.count({ where: { id: { in: [...viaSql, ...viaPrisma] } } })).toBe(2);
        expect(await prisma.outbox.count({ where: { messageId: { in: [...viaSql, ...viaPrisma] } } })).toBe(2);
      } finally {
        await asService.prisma.$disconnect();
      }
    },
  );
});
