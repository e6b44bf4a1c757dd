import { WEBHOOK_LIMITS, newId, type EventType, type Mode } from '@pmatch/contracts';
import { createDatabase, recordEvents, type Database, type PrismaClient } from '@pmatch/db';
import { DATABASE_ROLE, createTestDatabase, databaseUrlAs, rowsReadInTransaction, type TestDatabase } from '@pmatch/testkit';
import { sampleOrder } from './support/harness';
import { recordAcknowledgedAttempts, recordFailedAttempt, type FinishedAttempt } from '../src/data/attempts';
import { claimDueDeliveries, type ClaimedDelivery } from '../src/data/claims';
import { skipDeliveriesOfSwitchedOffEndpoints } from '../src/data/endpoints';
import { EVENTS_CONSUMER, OUT_OF_SCOPE, recordReceivedEvents, type ReceivedEvent } from '../src/data/received-events';

/**
 * The dispatcher's statements on their own, as its role runs them: received events recorded
 * together, what the claim reads, and the refusal of an outcome whose lease has passed to another
 * claim (which the service tests cannot time).
 */

const MINUTE = 60_000;
const NOW = new Date('2026-11-22T10:00:00Z');

let db: TestDatabase;
let owner: PrismaClient;
let dispatcher: Database;

beforeAll(async () => {
  db = await createTestDatabase();
  owner = createDatabase(db.url, { poolSize: 2 }).prisma;
  dispatcher = createDatabase(databaseUrlAs(db.url, DATABASE_ROLE['webhook-dispatcher']), { poolSize: 2 });
});

afterAll(async () => {
  await dispatcher?.prisma.$disconnect();
  await owner?.$disconnect();
  await db?.drop();
});

/** A due delivery of a fresh event to a fresh endpoint (failing since `failingSince`, if given). */
async function dueDelivery(failingSince: Date | null = null) {
  const organisationId = newId('organisation');
  await owner.organisation.create({ data: { id: organisationId, name: 'Shop', ownerEmail: 'owner@shop.example' } });
  const endpoint = await owner.webhookEndpoint.create({
    data: {
      id: newId('webhookEndpoint'),
      organisationId,
      mode: 'test',
      url: 'https://receiver.test/hook',
      secretEncrypted: 'sealed',
      previousSecrets: [{ secret_encrypted: 'sealed-before', expires_at: '2026-11-23T10:00:00.000Z' }],
      failingSince,
      createdAt: NOW,
    },
  });
  const [eventId] = await owner.$transaction((tx) =>
    recordEvents(tx, { organisationId, mode: 'test', bankAccountId: null, at: NOW }, [{ type: 'order.paid', data: { object: sampleOrder('test', NOW) } }]),
  );
  const delivery = await owner.webhookDelivery.create({
    data: { id: newId('delivery'), endpointId: endpoint.id, eventId: eventId!, status: 'pending', nextAttemptAt: NOW },
  });
  return { endpoint, eventId: eventId!, delivery };
}

/** A second pending delivery to the endpoint, of a fresh event, due at `dueAt`. */
async function anotherDelivery(endpoint: { id: string; organisationId: string }, dueAt: Date) {
  const [eventId] = await owner.$transaction((tx) =>
    recordEvents(tx, { organisationId: endpoint.organisationId, mode: 'test', bankAccountId: null, at: NOW }, [
      { type: 'order.paid', data: { object: sampleOrder('test', NOW) } },
    ]),
  );
  return owner.webhookDelivery.create({ data: { id: newId('delivery'), endpointId: endpoint.id, eventId: eventId!, status: 'pending', nextAttemptAt: dueAt } });
}

const statusOf = async (id: string) => (await owner.webhookDelivery.findUniqueOrThrow({ where: { id } })).status;

/** Claims every due delivery, one per endpoint, with room for all of them. */
function claimAllDue(): Promise<ClaimedDelivery[]> {
  return claimDueDeliveries(dispatcher.sql, NOW, { leaseUntil: new Date(NOW.getTime() + MINUTE), free: 100, slowFree: 100, known: [], unknownAllowance: 1 });
}

/** Claims every due delivery (one per endpoint) and returns the one of `endpointId`. */
async function claim(endpointId: string): Promise<ClaimedDelivery> {
  return (await claimEach([endpointId]))[0]!;
}

async function claimEach(endpointIds: string[]): Promise<ClaimedDelivery[]> {
  const claimed = await claimAllDue();
  return endpointIds.map((endpointId) => {
    const mine = claimed.find((c) => c.endpoint.id === endpointId);
    if (mine === undefined) throw new Error(`no delivery of ${endpointId} was claimed`);
    return mine;
  });
}

function finished(delivery: ClaimedDelivery, outcome: Partial<FinishedAttempt>): FinishedAttempt {
  return {
    deliveryId: delivery.id,
    endpointId: delivery.endpoint.id,
    attempt: delivery.attemptCount + 1,
    leasedUntil: delivery.leasedUntil,
    attemptedAt: new Date(NOW.getTime() + 1_000),
    statusCode: 200,
    durationMs: 12,
    error: null,
    retryAt: null,
    ...outcome,
  };
}

test('when a delivery is claimed, then its event and endpoint read as Prisma reads them, and it is leased', async () => {
  const { endpoint, eventId, delivery } = await dueDelivery();

  const claimed = await claim(endpoint.id);

  const { txId: _txId, ...event } = (await owner.event.findUniqueOrThrow({ where: { id: eventId } })) as Record<string, unknown>;
  expect(claimed).toEqual({
    id: delivery.id,
    attemptCount: 0,
    maxAttempts: delivery.maxAttempts,
    leasedUntil: new Date(NOW.getTime() + MINUTE),
    event,
    endpoint: {
      id: endpoint.id,
      organisationId: endpoint.organisationId,
      mode: 'test',
      url: endpoint.url,
      secretEncrypted: 'sealed',
      replacedSecrets: [{ secretEncrypted: 'sealed-before', expiresAt: new Date('2026-11-23T10:00:00.000Z') }],
    },
  });
  expect(typeof claimed.event.seq).toBe('bigint');
  expect(await owner.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({
    nextAttemptAt: claimed.leasedUntil,
    leasedUntil: claimed.leasedUntil,
    updatedAt: NOW,
  });
});

test('when an outcome comes after its lease passed to another claim, then neither a success nor a failure writes anything', async () => {
  const failingSince = new Date(NOW.getTime() - MINUTE);
  const { endpoint, delivery } = await dueDelivery(failingSince);
  const claimed = await claim(endpoint.id);
  // Another dispatcher's claim, once this one's lease ran out: same attempt count, a later lease.
  await owner.webhookDelivery.update({ where: { id: delivery.id }, data: { leasedUntil: new Date(NOW.getTime() + 2 * MINUTE) } });
  const before = await owner.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });

  expect(await recordAcknowledgedAttempts(dispatcher.sql, [finished(claimed, {})])).toEqual([false]);
  const failure = finished(claimed, { statusCode: 500, retryAt: new Date(NOW.getTime() + MINUTE) });
  expect(await dispatcher.transaction((tx) => recordFailedAttempt(tx, failure))).toBeNull();

  expect(await owner.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toEqual(before);
  expect(await owner.webhookDeliveryAttempt.count({ where: { deliveryId: delivery.id } })).toBe(0);
  expect(await owner.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({ failingSince });
});

test("when acknowledged attempts are recorded together, then each under its own lease is written with its log line and ends its endpoint's failures, and a stale one writes nothing", async () => {
  const failingSince = new Date(NOW.getTime() - MINUTE);
  const made = [await dueDelivery(failingSince), await dueDelivery(failingSince), await dueDelivery(failingSince)];
  const [first, stale, second] = await claimEach(made.map((m) => m.endpoint.id));
  await owner.webhookDelivery.update({ where: { id: stale!.id }, data: { leasedUntil: new Date(NOW.getTime() + 2 * MINUTE) } });
  const staleBefore = await owner.webhookDelivery.findUniqueOrThrow({ where: { id: stale!.id } });

  const written = await recordAcknowledgedAttempts(dispatcher.sql, [
    finished(first!, { durationMs: 7 }),
    finished(stale!, {}),
    finished(second!, { statusCode: 204, durationMs: 9 }),
  ]);

  expect(written).toEqual([true, false, true]);
  for (const [delivery, statusCode, durationMs] of [
    [first!, 200, 7],
    [second!, 204, 9],
  ] as const) {
    expect(await owner.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({
      status: 'succeeded',
      attemptCount: 1,
      nextAttemptAt: null,
      leasedUntil: null,
      updatedAt: new Date(NOW.getTime() + 1_000),
    });
    expect(await owner.webhookDeliveryAttempt.findMany({ where: { deliveryId: delivery.id } })).toEqual([
      expect.objectContaining({ attempt: 1, statusCode, durationMs, error: null, attemptedAt: new Date(NOW.getTime() + 1_000) }),
    ]);
    expect(await owner.webhookEndpoint.findUniqueOrThrow({ where: { id: delivery.endpoint.id } })).toMatchObject({ failingSince: null });
  }
  expect(await owner.webhookDelivery.findUniqueOrThrow({ where: { id: stale!.id } })).toEqual(staleBefore);
  expect(await owner.webhookDeliveryAttempt.count({ where: { deliveryId: stale!.id } })).toBe(0);
  expect(await owner.webhookEndpoint.findUniqueOrThrow({ where: { id: stale!.endpoint.id } })).toMatchObject({ failingSince });
});

test('when a failure is recorded under the current lease, then it schedules the retry, logs the attempt and answers the run of failures', async () => {
  const { endpoint, delivery } = await dueDelivery();
  const claimed = await claim(endpoint.id);
  const failure = finished(claimed, { statusCode: null, error: 'no answer within 2000 ms', durationMs: 2_000, retryAt: new Date(NOW.getTime() + MINUTE) });

  const recorded = await dispatcher.transaction((tx) => recordFailedAttempt(tx, failure));

  expect(recorded).toEqual({
    status: 'pending',
    endpoint: { failingSince: failure.attemptedAt, enabled: true, lastFailureEmailAt: null, ownerEmail: 'owner@shop.example' },
  });
  expect(await owner.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({
    status: 'pending',
    attemptCount: 1,
    nextAttemptAt: failure.retryAt,
    leasedUntil: null,
    updatedAt: failure.attemptedAt,
  });
  expect(await owner.webhookDeliveryAttempt.findMany({ where: { deliveryId: delivery.id } })).toMatchObject([
    { attempt: 1, statusCode: null, durationMs: 2_000, error: 'no answer within 2000 ms', attemptedAt: failure.attemptedAt },
  ]);
});

test('when endpoints with only deliveries due later lie between endpoints with due ones, then a claim takes one due delivery of each due endpoint and none of the others', async () => {
  const made = await Promise.all(Array.from({ length: 8 }, () => dueDelivery()));
  const later = made.filter((_, i) => i % 2 === 1);
  for (const { delivery } of later) {
    await owner.webhookDelivery.update({ where: { id: delivery.id }, data: { nextAttemptAt: new Date(NOW.getTime() + 60 * MINUTE) } });
  }
  const ours = new Set(made.map((m) => m.endpoint.id));

  const claimed = await claimAllDue();

  const claimedOurs = claimed
    .filter((c) => ours.has(c.endpoint.id))
    .map((c) => c.id)
    .sort();
  expect(claimedOurs).toEqual(
    made
      .filter((_, i) => i % 2 === 0)
      .map((m) => m.delivery.id)
      .sort(),
  );
});

test('when two dispatchers claim at once, then the second skips the deliveries the first holds and takes the others, without waiting for it', async () => {
  const { endpoint, delivery } = await dueDelivery();
  const others = [];
  for (let i = 1; i < 4; i += 1) others.push(await anotherDelivery(endpoint, new Date(NOW.getTime() - MINUTE + i)));
  const limits = (allowance: number) => ({
    leaseUntil: new Date(NOW.getTime() + MINUTE),
    free: allowance,
    slowFree: allowance,
    known: [{ endpointId: endpoint.id, allowance, inFlight: 0, slow: false }],
    unknownAllowance: 0,
  });
  const ours = (claimed: ClaimedDelivery[]) => claimed.filter((c) => c.endpoint.id === endpoint.id).map((c) => c.id);

  let second: string[] = [];
  const first = await dispatcher.transaction(async (sql) => {
    const held = ours(await claimDueDeliveries(sql, NOW, limits(2)));
    // The first claim's rows stay locked until its transaction ends. The second, meanwhile, still
    // sees all four due, offers them, and leaves out the two it cannot lock at once.
    second = ours(await claimDueDeliveries(dispatcher.sql, NOW, limits(4)));
    return held;
  });

  // Oldest first: the three due before NOW, then the one due at NOW.
  expect(first).toEqual([others[0]!.id, others[1]!.id]);
  expect(second).toEqual([others[2]!.id, delivery.id]);
});

/** Deliveries waiting on each endpoint of a backlog (`withBacklog`). */
const BULK_PER_ENDPOINT = 1_500;
/**
 * Statements run this many times in one transaction, which pg_stat_xact_user_tables counts the
 * reads of: it covers both plans of a prepared statement, those made for the values given and the
 * generic one PostgreSQL may take after five.
 */
const POLLS = 7;

/**
 * Runs `work` while `BULK_PER_ENDPOINT` deliveries wait on each of these endpoints, due a minute
 * before NOW (on a test's own database, which is dropped after it). They are analysed as finished
 * deliveries first, so the planner goes by statistics that count few pending rows, as after a
 * quiet spell: a plan that walks every waiting delivery then looks as cheap as one that does not.
 */
async function withBacklog<T>(endpointIds: string[], work: () => Promise<T>): Promise<T> {
  await owner.$executeRaw`
    INSERT INTO events (id, organisation_id, mode, type, data, created_at)
    SELECT 'evt_bulk_' || e.id || '_' || g, e.organisation_id, 'test', 'order.paid', '{}'::jsonb, ${NOW}
    FROM webhook_endpoints e, generate_series(1, ${BULK_PER_ENDPOINT}) g WHERE e.id = ANY(${endpointIds})`;
  await owner.$executeRaw`
    INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, next_attempt_at)
    SELECT 'dlv_bulk_' || ev.id, e.id, ev.id, 'succeeded', NULL
    FROM webhook_endpoints e JOIN events ev ON ev.id LIKE 'evt_bulk_' || e.id || '_%' WHERE e.id = ANY(${endpointIds})`;
  await owner.$executeRaw`ANALYZE webhook_deliveries`;
  await owner.$executeRaw`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${new Date(NOW.getTime() - MINUTE)} WHERE id LIKE 'dlv_bulk_%'`;
  return work();
}

describe('received events', () => {
  /** A fresh organisation with one endpoint per entry (test mode, every type, unless given). */
  async function organisationWith(endpoints: { mode?: Mode; enabledEvents?: EventType[]; enabled?: boolean }[]) {
    const organisationId = newId('organisation');
    await owner.organisation.create({ data: { id: organisationId, name: 'Shop', ownerEmail: 'owner@shop.example' } });
    const endpointIds: string[] = [];
    for (const endpoint of endpoints) {
      const { id } = await owner.webhookEndpoint.create({
        data: {
          id: newId('webhookEndpoint'),
          organisationId,
          mode: endpoint.mode ?? 'test',
          url: 'https://receiver.test/hook',
          secretEncrypted: 'sealed',
          enabledEvents: endpoint.enabledEvents ?? [],
          enabled: endpoint.enabled ?? true,
          // Created when the events are recorded: an endpoint gets only events recorded since it exists.
          createdAt: NOW,
        },
      });
      endpointIds.push(id);
    }
    return { organisationId, endpointIds };
  }

  /** A recorded event as its announcement tells the dispatcher of it. */
  async function announced(organisationId: string, mode: Mode = 'test', type: 'order.paid' | 'order.created' = 'order.paid'): Promise<ReceivedEvent> {
    const [eventId] = await owner.$transaction((tx) =>
      recordEvents(tx, { organisationId, mode, bankAccountId: null, at: NOW }, [{ type, data: { object: sampleOrder(mode, NOW) } }]),
    );
    return { eventId: eventId!, organisationId, mode, type };
  }

  /** The endpoints each event has a pending delivery to, due now. */
  async function deliveredTo(eventIds: string[]): Promise<Record<string, string[]>> {
    const rows = await owner.webhookDelivery.findMany({ where: { eventId: { in: eventIds } }, orderBy: { endpointId: 'asc' } });
    for (const row of rows)
      expect({ status: row.status, attempts: row.attemptCount, due: row.nextAttemptAt }).toEqual({ status: 'pending', attempts: 0, due: NOW });
    return Object.fromEntries(eventIds.map((eventId) => [eventId, rows.filter((r) => r.eventId === eventId).map((r) => r.endpointId)]));
  }

  const sorted = (ids: string[]) => [...ids].sort();

  test('when events of several organisations and modes arrive together, then each is sent to its own enabled, subscribed endpoints only', async () => {
    const shop = await organisationWith([{}, { mode: 'live' }, { enabledEvents: ['order.created'] }, { enabled: false }, { enabledEvents: ['order.paid'] }]);
    const other = await organisationWith([{}, { mode: 'live' }]);
    const silent = await organisationWith([{ mode: 'live' }]);
    const events = [
      await announced(shop.organisationId, 'test', 'order.paid'),
      await announced(shop.organisationId, 'test', 'order.created'),
      await announced(shop.organisationId, 'live', 'order.paid'),
      await announced(other.organisationId, 'test', 'order.paid'),
      await announced(silent.organisationId, 'test', 'order.paid'),
    ];

    const created = await recordReceivedEvents(dispatcher.sql, events, NOW);

    const [all, shopLive, createdOnly, , paidOnly] = shop.endpointIds as [string, string, string, string, string];
    expect(await deliveredTo(events.map((e) => e.eventId))).toEqual({
      [events[0]!.eventId]: sorted([all, paidOnly]),
      [events[1]!.eventId]: sorted([all, createdOnly]),
      [events[2]!.eventId]: [shopLive],
      [events[3]!.eventId]: [other.endpointIds[0]],
      [events[4]!.eventId]: [],
    });
    expect(created).toEqual([2, 2, 1, 1, 0]);
    const inbox = await owner.inbox.findMany({ where: { consumer: EVENTS_CONSUMER, messageId: { in: events.map((e) => e.eventId) } } });
    expect(inbox).toHaveLength(events.length);
  });

  test('when a batch holds an event seen before and an event twice, then each is recorded once and the repeats answer 0', async () => {
    const shop = await organisationWith([{}, {}]);
    const seen = await announced(shop.organisationId);
    const twice = await announced(shop.organisationId);
    const fresh = await announced(shop.organisationId);
    expect(await recordReceivedEvents(dispatcher.sql, [seen], NOW)).toEqual([2]);
    await owner.webhookDelivery.deleteMany({ where: { eventId: seen.eventId } });

    const created = await recordReceivedEvents(dispatcher.sql, [twice, seen, fresh, twice], NOW);

    expect(created).toEqual([2, 0, 2, 0]);
    const delivered = await deliveredTo([seen, twice, fresh].map((e) => e.eventId));
    expect(Object.values(delivered).map((endpoints) => endpoints.length)).toEqual([0, 2, 2]);
  });

  test('when an event of a batch has no row, or its row is of another organisation, mode or type, then nothing is written for it and the rest are recorded', async () => {
    const shop = await organisationWith([{}]);
    const other = await organisationWith([{}, { mode: 'live' }]);
    const good = await announced(shop.organisationId);
    const gone: ReceivedEvent = { ...(await announced(shop.organisationId)), eventId: newId('event') };
    const shopsEvent = await announced(shop.organisationId);
    const claimedByOther: ReceivedEvent = { ...shopsEvent, organisationId: other.organisationId };
    const otherMode: ReceivedEvent = { ...shopsEvent, organisationId: other.organisationId, mode: 'live' };
    const otherType: ReceivedEvent = { ...shopsEvent, type: 'order.created' };

    const created = await recordReceivedEvents(dispatcher.sql, [claimedByOther, good, gone, otherMode, otherType], NOW);

    expect(created).toEqual([OUT_OF_SCOPE, 1, OUT_OF_SCOPE, OUT_OF_SCOPE, OUT_OF_SCOPE]);
    expect(await deliveredTo([shopsEvent.eventId, gone.eventId])).toEqual({ [shopsEvent.eventId]: [], [gone.eventId]: [] });
    expect(await owner.inbox.count({ where: { consumer: EVENTS_CONSUMER, messageId: { in: [gone.eventId, shopsEvent.eventId] } } })).toBe(0);
    // The real announcement is still recorded, as if the forged ones never came.
    expect(await recordReceivedEvents(dispatcher.sql, [shopsEvent], NOW)).toEqual([1]);
  });

  test('when an organisation has more endpoints than registration allows, then its event goes again with more delivery ids, and the rest of the batch is recorded once', async () => {
    const crowded = await organisationWith(Array.from({ length: WEBHOOK_LIMITS.endpointsPerMode + 2 }, () => ({})));
    const plain = await organisationWith([{}]);
    const events = [await announced(plain.organisationId), await announced(crowded.organisationId), await announced(plain.organisationId)];

    const created = await recordReceivedEvents(dispatcher.sql, events, NOW);

    expect(created).toEqual([1, WEBHOOK_LIMITS.endpointsPerMode + 2, 1]);
    const delivered = await deliveredTo(events.map((e) => e.eventId));
    expect(delivered[events[1]!.eventId]).toEqual(sorted(crowded.endpointIds));
    const ids = await owner.webhookDelivery.findMany({ where: { eventId: { in: events.map((e) => e.eventId) } }, select: { id: true } });
    expect(new Set(ids.map((d) => d.id)).size).toBe(WEBHOOK_LIMITS.endpointsPerMode + 4);
  });
});

describe('deliveries of switched-off endpoints', () => {
  test('when endpoints are switched off or deleted, then their due deliveries are skipped and the rest wait: later ones, and those of endpoints still on', async () => {
    const live = await dueDelivery();
    const off = await dueDelivery();
    const deleted = await dueDelivery();
    const offLater = await anotherDelivery(off.endpoint, new Date(NOW.getTime() + MINUTE));
    await owner.webhookEndpoint.update({ where: { id: off.endpoint.id }, data: { enabled: false, disabledReason: 'failing' } });
    await owner.webhookEndpoint.update({ where: { id: deleted.endpoint.id }, data: { deletedAt: NOW } });

    expect(await skipDeliveriesOfSwitchedOffEndpoints(dispatcher.sql, NOW)).toBeGreaterThanOrEqual(2);

    expect(await statusOf(off.delivery.id)).toBe('skipped');
    expect(await statusOf(deleted.delivery.id)).toBe('skipped');
    expect(await statusOf(offLater.id)).toBe('pending');
    expect(await statusOf(live.delivery.id)).toBe('pending');
    expect(await skipDeliveriesOfSwitchedOffEndpoints(dispatcher.sql, NOW)).toBe(0);
  });
});

describe('under a backlog the statistics predate', () => {
  // The statistics these tests depend on count every pending delivery in the table, and the
  // other tests leave some: each runs on a database of its own, where the only ones are its own.
  let outer: { db: TestDatabase; owner: PrismaClient; dispatcher: Database };

  beforeEach(async () => {
    outer = { db, owner, dispatcher };
    db = await createTestDatabase();
    owner = createDatabase(db.url, { poolSize: 2 }).prisma;
    dispatcher = createDatabase(databaseUrlAs(db.url, DATABASE_ROLE['webhook-dispatcher']), { poolSize: 2 });
  });

  afterEach(async () => {
    await dispatcher.prisma.$disconnect();
    await owner.$disconnect();
    await db.drop();
    ({ db, owner, dispatcher } = outer);
  });

  test('when many deliveries are due and the statistics predate them, then each claim takes the oldest of each endpoint and reads a few entries per endpoint, not every due delivery', async () => {
    const endpoints = [];
    for (let i = 0; i < 3; i += 1) endpoints.push((await dueDelivery()).endpoint);
    const ids = endpoints.map((e) => e.id);

    const { read, claims } = await withBacklog(ids, () =>
      dispatcher.transaction(async (sql) => {
        const claims: ClaimedDelivery[][] = [];
        for (let poll = 0; poll < POLLS; poll += 1) {
          claims.push(
            await claimDueDeliveries(sql, NOW, { leaseUntil: new Date(NOW.getTime() + MINUTE), free: 8, slowFree: 8, known: [], unknownAllowance: 2 }),
          );
        }
        return { read: await rowsReadInTransaction(sql, 'webhook_deliveries'), claims };
      }),
    );

    // The backlog's deliveries are the oldest due, so every claim's first turn takes one of each.
    for (const claimed of claims) {
      expect(ids.filter((id) => !claimed.some((c) => c.endpoint.id === id && c.id.startsWith('dlv_bulk_')))).toEqual([]);
    }
    // A claim visits a few entries per endpoint with pending deliveries and the rows it leases:
    // far fewer than the 1,500 due on each endpoint.
    expect(read / POLLS).toBeLessThan(BULK_PER_ENDPOINT / 10);
  });

  test('when many deliveries are due and the statistics predate them, then recording outcomes finds each delivery by its key, not among every pending one', async () => {
    const endpoints = [];
    for (let i = 0; i < 3; i += 1) endpoints.push((await dueDelivery()).endpoint);
    const ids = endpoints.map((e) => e.id);

    const read = await withBacklog(ids, async () => {
      const claimed = await claimDueDeliveries(dispatcher.sql, NOW, {
        leaseUntil: new Date(NOW.getTime() + MINUTE),
        free: 3 * POLLS,
        slowFree: 0,
        known: [],
        unknownAllowance: POLLS,
      });
      expect(claimed).toHaveLength(3 * POLLS);
      return dispatcher.transaction(async (sql) => {
        for (let poll = 0; poll < POLLS; poll += 1) {
          const [acknowledged, alsoAcknowledged, failed] = claimed.slice(3 * poll, 3 * poll + 3);
          expect(await recordAcknowledgedAttempts(sql, [finished(acknowledged!, {}), finished(alsoAcknowledged!, {})])).toEqual([true, true]);
          expect(await recordFailedAttempt(sql, finished(failed!, { statusCode: 500, retryAt: new Date(NOW.getTime() + MINUTE) }))).not.toBeNull();
        }
        return rowsReadInTransaction(sql, 'webhook_deliveries');
      });
    });

    // Each outcome reads its own delivery: far fewer than the 1,500 pending on each endpoint.
    expect(read / POLLS).toBeLessThan(BULK_PER_ENDPOINT / 10);
  });

  test("when an organisation has many events of one type and the statistics predate them, then a received event's check reads its own row by key, not the organisation's events of that type", async () => {
    const { endpoint } = await dueDelivery();
    // Analysed while they belong to organisations of their own, then moved to the endpoint's
    // organisation: the statistics say no organisation has many events, as when a shop grows fast.
    await owner.$executeRaw`
      INSERT INTO organisations (id, name, owner_email) SELECT 'org_bulk_' || g, 'Shop', 'owner@shop.example' FROM generate_series(1, ${BULK_PER_ENDPOINT}) g`;
    await owner.$executeRaw`
      INSERT INTO events (id, organisation_id, mode, type, data, created_at)
      SELECT 'evt_bulk_' || g, 'org_bulk_' || g, 'test', 'order.paid', '{}'::jsonb, ${NOW} FROM generate_series(1, ${BULK_PER_ENDPOINT}) g`;
    await owner.$executeRaw`ANALYZE events`;
    await owner.$executeRaw`UPDATE events SET organisation_id = ${endpoint.organisationId} WHERE id LIKE 'evt_bulk_%'`;
    const received = Array.from({ length: POLLS * 10 }, (_, i): ReceivedEvent => ({
      eventId: `evt_bulk_${i + 1}`,
      organisationId: endpoint.organisationId,
      mode: 'test',
      type: 'order.paid',
    }));

    const read = await dispatcher.transaction(async (sql) => {
      // The counters may still hold reads of an earlier transaction on this connection (not yet flushed).
      const before = await rowsReadInTransaction(sql, 'events');
      for (let poll = 0; poll < POLLS; poll += 1) {
        expect(await recordReceivedEvents(sql, received.slice(10 * poll, 10 * poll + 10), NOW)).toEqual(Array(10).fill(1));
      }
      return (await rowsReadInTransaction(sql, 'events')) - before;
    });

    // Ten events a batch, each found by its key: far fewer than the organisation's 1,500.
    expect(read / POLLS).toBeLessThan(BULK_PER_ENDPOINT / 10);
  });

  test('when many deliveries wait on endpoints still on and the statistics predate them, then a poll reads a few index entries, not every waiting delivery', async () => {
    const endpoints = [];
    for (let i = 0; i < 3; i += 1) endpoints.push((await dueDelivery()).endpoint);
    const off = await dueDelivery();
    await owner.webhookEndpoint.update({ where: { id: off.endpoint.id }, data: { enabled: false, disabledReason: 'failing' } });
    const ids = endpoints.map((e) => e.id);
    const read = await withBacklog(ids, () =>
      dispatcher.transaction(async (sql) => {
        for (let poll = 0; poll < POLLS; poll += 1) await skipDeliveriesOfSwitchedOffEndpoints(sql, NOW);
        return rowsReadInTransaction(sql, 'webhook_deliveries');
      }),
    );

    expect(await statusOf(off.delivery.id)).toBe('skipped');
    // A poll visits one entry per endpoint with pending deliveries and the switched-off one's due
    // deliveries: far fewer than the 1,500 waiting on each endpoint, all of which a walk of the
    // index or the table reads.
    expect(read / POLLS).toBeLessThan(BULK_PER_ENDPOINT / 10);
  });
});
