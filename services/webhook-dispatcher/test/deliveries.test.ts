import { newId } from '@pmatch/contracts';
import { createDatabase, recordEvents, type Database, type PrismaClient } from '@pmatch/db';
import { DATABASE_ROLE, createTestDatabase, databaseUrlAs, type TestDatabase } from '@pmatch/testkit';
import { sampleOrder } from './support/harness';
import { claimDueDeliveries, recordAcknowledgedAttempts, recordFailedAttempt, type ClaimedDelivery, type FinishedAttempt } from '../src/data/deliveries';

/**
 * The statements of a delivery attempt on their own, as the dispatcher's role runs them: what the
 * claim reads, and the refusal of an outcome whose lease has passed to another claim (which the
 * service tests cannot time).
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

/** Claims every due delivery (one per endpoint) and returns the one of `endpointId`. */
async function claim(endpointId: string): Promise<ClaimedDelivery> {
  return (await claimEach([endpointId]))[0]!;
}

async function claimEach(endpointIds: string[]): Promise<ClaimedDelivery[]> {
  const claimed = await claimDueDeliveries(dispatcher.sql, NOW, {
    leaseUntil: new Date(NOW.getTime() + MINUTE),
    free: 100,
    slowFree: 100,
    known: [],
    unknownAllowance: 1,
  });
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

test('when acknowledged attempts are recorded together, then each under its own lease is written with its log line and ends its endpoint\'s failures, and a stale one writes nothing', async () => {
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
  for (const [delivery, statusCode, durationMs] of [[first!, 200, 7], [second!, 204, 9]] as const) {
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

  const claimed = await claimDueDeliveries(dispatcher.sql, NOW, { leaseUntil: new Date(NOW.getTime() + MINUTE), free: 100, slowFree: 100, known: [], unknownAllowance: 1 });

  const claimedOurs = claimed.filter((c) => ours.has(c.endpoint.id)).map((c) => c.id).sort();
  expect(claimedOurs).toEqual(made.filter((_, i) => i % 2 === 0).map((m) => m.delivery.id).sort());
});
