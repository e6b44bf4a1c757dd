import { QUEUES } from '@pmatch/contracts';
import { PLAN_CACHE_MODES, planNodes, preparedPlan, waitFor } from '@pmatch/testkit';
import { readEventsAfterQuery } from '../src/data/unreceived-events';
import { DispatcherHarness } from './support/harness';
import { HttpsReceiver } from './support/receiver';
import { TestCa } from './support/tls';

const GRACE_MS = 120_000;

let ca: TestCa;
let receiver: HttpsReceiver;
let harness: DispatcherHarness;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  harness = await DispatcherHarness.start({
    env: {
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
      WEBHOOK_CA_FILE: ca.certFile,
      DELIVERY_TIMEOUT_MS: '2000',
      // Passes are made by the tests (`sweepEvents`), apart from the one at start.
      EVENT_SWEEP_INTERVAL_MS: '3600000',
      EVENT_SWEEP_GRACE_MS: String(GRACE_MS),
    },
    seams: { resolveHost: async () => Promise.resolve(['127.0.0.1']) },
  });
});

afterAll(async () => {
  await harness?.setDispatcherDatabaseReachable(true).catch(() => undefined);
  await harness?.stop();
  await receiver?.close();
  ca?.remove();
});

let pathCounter = 0;
const freshPath = () => `/sweep/${++pathCounter}`;

/** Sweep passes until one reads nothing; resolves with the events read. */
async function sweepUntilCaughtUp(): Promise<number> {
  let read = 0;
  for (;;) {
    const found = await harness.dispatcher.sweepEvents();
    if (found === 0) return read;
    read += found;
  }
}

/** The webhook-ids each path received, sorted. */
const idsReceivedAt = (path: string) =>
  receiver
    .requestsTo(path)
    .map((r) => String(r.headers['webhook-id']))
    .sort();

describe('event sweep', () => {
  test('when the dispatcher cannot reach its database until its event messages are dead-lettered, then once it can, every event is delivered exactly once per endpoint, and replaying the dead letters or sweeping twice changes nothing', async () => {
    const orgId = await harness.createOrganisation();
    const paths = [freshPath(), freshPath()];
    const endpoints = await Promise.all(paths.map((path) => harness.createEndpoint(orgId, receiver.url(path))));
    const deadBefore = await harness.deadLetters(QUEUES.dispatcherEvents);

    await harness.setDispatcherDatabaseReachable(false);
    const eventIds = [...(await harness.recordEvents(orgId, 2, 'order.paid')), ...(await harness.recordEvents(orgId, 1, 'transaction.deposited'))];
    // Each message fails on every delivery (1 + 2 + 4 + 8 + 16 s of backoff) and is dead-lettered.
    await waitFor(async () => ((await harness.deadLetters(QUEUES.dispatcherEvents)) === deadBefore + 2 ? true : undefined), {
      timeoutMs: 90_000,
      what: 'both event.recorded messages to be dead-lettered',
    });
    await harness.setDispatcherDatabaseReachable(true);
    expect(await harness.prisma.webhookDelivery.count({ where: { eventId: { in: eventIds } } })).toBe(0);

    // Within the grace period the sweep leaves them to their messages; after it, two passes at once take them in once.
    await sweepUntilCaughtUp();
    expect(await harness.prisma.webhookDelivery.count({ where: { eventId: { in: eventIds } } })).toBe(0);
    harness.clock.advance(GRACE_MS + 1000);
    const [first, second] = await Promise.all([harness.dispatcher.sweepEvents(), harness.dispatcher.sweepEvents()]);
    expect(first).toBeGreaterThanOrEqual(eventIds.length);
    expect(second).toBeGreaterThanOrEqual(eventIds.length);
    await sweepUntilCaughtUp();
    expect(await harness.metric('webhook_events_swept_total')).toBeGreaterThanOrEqual(eventIds.length);

    for (const endpoint of endpoints) for (const eventId of eventIds) await harness.waitForAttempts(endpoint.id, eventId, 1);
    for (const path of paths) expect(idsReceivedAt(path)).toEqual([...eventIds].sort());

    // The dead letters replayed: the consumer takes them in, and they create nothing.
    const receivedBefore = await harness.metric('webhook_events_received_total');
    expect(await harness.replayDeadLetters(QUEUES.dispatcherEvents)).toBe(deadBefore + 2);
    await waitFor(async () => ((await harness.metric('webhook_events_received_total')) >= receivedBefore + eventIds.length ? true : undefined), {
      what: 'the replayed messages to be taken in',
    });
    expect(await harness.deadLetters(QUEUES.dispatcherEvents)).toBe(0);
    await harness.dispatcher.runDueDeliveries();
    expect(await harness.prisma.webhookDelivery.count({ where: { eventId: { in: eventIds } } })).toBe(eventIds.length * endpoints.length);
    for (const path of paths) expect(idsReceivedAt(path)).toEqual([...eventIds].sort());
  });

  test('when events were recorded but their message never published, then the sweep takes them in after the grace period, and the late message creates nothing', async () => {
    const orgId = await harness.createOrganisation();
    const path = freshPath();
    const endpoint = await harness.createEndpoint(orgId, receiver.url(path));
    const eventIds = await harness.recordEventsUnpublished(orgId, 3, 'order.paid');

    await sweepUntilCaughtUp();
    expect(await harness.prisma.webhookDelivery.count({ where: { eventId: { in: eventIds } } })).toBe(0);
    harness.clock.advance(GRACE_MS + 1000);
    expect(await sweepUntilCaughtUp()).toBeGreaterThanOrEqual(eventIds.length);
    for (const eventId of eventIds) await harness.waitForAttempts(endpoint.id, eventId, 1);

    // The message comes after all, and once more as a redelivery: 3 events taken in twice, creating nothing.
    const receivedBefore = await harness.metric('webhook_events_received_total');
    await harness.publishOutbox();
    await harness.republishEvent(eventIds[0]!);
    await waitFor(async () => ((await harness.metric('webhook_events_received_total')) >= receivedBefore + 2 * eventIds.length ? true : undefined), {
      what: 'the late message and its redelivery to be taken in',
    });
    await harness.dispatcher.runDueDeliveries();
    expect(await harness.prisma.webhookDelivery.count({ where: { eventId: { in: eventIds } } })).toBe(eventIds.length);
    expect(idsReceivedAt(path)).toEqual([...eventIds].sort());
  });

  test('when an event arrives late, by its delayed message or by the sweep, then an endpoint created after it was recorded gets no delivery of it, and one that existed gets it', async () => {
    const orgId = await harness.createOrganisation();
    const [before, after] = [freshPath(), freshPath()];
    const existing = await harness.createEndpoint(orgId, receiver.url(before), { enabledEvents: ['order.paid'] });
    const [delayed] = await harness.recordEventsUnpublished(orgId, 1, 'order.paid');
    const [swept] = await harness.recordEventsUnpublished(orgId, 1, 'order.paid');
    harness.clock.advance(1000);
    const created = await harness.createEndpoint(orgId, receiver.url(after), { enabledEvents: ['order.paid'] });

    // The first event's message is published only now; the second is left to the sweep.
    await harness.prisma.outbox.updateMany({ where: { messageId: swept! }, data: { publishedAt: new Date() } });
    await harness.publishOutbox();
    await harness.waitForEventReceived(delayed!);
    harness.clock.advance(GRACE_MS + 1000);
    await sweepUntilCaughtUp();
    await harness.waitForEventReceived(swept!);

    for (const eventId of [delayed!, swept!]) await harness.waitForAttempts(existing.id, eventId, 1);
    await harness.dispatcher.runDueDeliveries();
    expect(await harness.prisma.webhookDelivery.count({ where: { endpointId: created.id } })).toBe(0);
    expect(idsReceivedAt(before)).toEqual([delayed!, swept!].sort());
    expect(idsReceivedAt(after)).toEqual([]);

    // An event recorded after the endpoint was created reaches it.
    const later = await harness.recordEvent(orgId, 'order.paid');
    await harness.waitForAttempts(created.id, later, 1);
    expect(idsReceivedAt(after)).toEqual([later]);
  });

  test('when dead letters of events announce only events taken in since, then they are removed; one naming an event not taken in, or not parsing, stays for a person', async () => {
    const orgId = await harness.createOrganisation();
    await harness.createEndpoint(orgId, receiver.url(freshPath()));
    const queue = QUEUES.dispatcherEvents;
    expect(await harness.deadLetters(queue)).toBe(0);
    const takenIn = await harness.recordEvents(orgId, 2, 'order.paid');
    for (const eventId of takenIn) await harness.waitForEventReceived(eventId);
    const [notTakenIn] = await harness.recordEventsUnpublished(orgId, 1, 'order.paid');
    const letter = (eventIds: string[]) => ({
      organisation_id: orgId,
      mode: 'test',
      events: eventIds.map((event_id) => ({ event_id, type: 'order.paid' })),
    });
    await harness.deadLetter(queue, letter(takenIn));
    await harness.deadLetter(queue, letter([takenIn[0]!, notTakenIn!]));
    await harness.deadLetter(queue, { not: 'an event.recorded message' });
    await harness.deadLetter(queue, letter([takenIn[1]!]));
    await waitFor(async () => ((await harness.deadLetters(queue)) === 4 ? true : undefined), { what: 'the four letters to be dead' });

    // The dispatcher's own sweep may be looking at them too (a letter it holds is not counted until
    // it puts it back): what counts is what is left once both are done.
    await harness.dispatcher.discardHarmlessDeadLetters();
    await waitFor(async () => ((await harness.deadLetters(queue)) === 2 ? true : undefined), { what: 'the two letters that need a person to be left' });
    expect(await harness.metric('pmatch_dlq_messages')).toBe(2);
    // Once the event sweep has taken the missing event in, its letter goes too; the malformed one stays.
    harness.clock.advance(GRACE_MS + 1000);
    await sweepUntilCaughtUp();
    await harness.waitForEventReceived(notTakenIn!);
    await harness.dispatcher.discardHarmlessDeadLetters();
    await waitFor(async () => ((await harness.deadLetters(queue)) === 1 ? true : undefined), { what: 'the malformed letter alone to be left' });
    expect(await harness.dispatcher.discardHarmlessDeadLetters()).toBe(0);
  });

  test.each(PLAN_CACHE_MODES)(
    'when the events table holds thousands of events, then a pass (%s) reads a range of events_created_at_idx, not the table',
    async (planCacheMode) => {
      const orgId = await harness.createOrganisation();
      await harness.prisma.$executeRaw`
      INSERT INTO events (id, organisation_id, mode, type, data, created_at)
      SELECT 'evt_bulk_' || md5(random()::text), ${orgId}, 'test', 'order.paid', '{}'::jsonb, now() - g * interval '1 second'
      FROM generate_series(1, 5000) g`;
      await harness.prisma.$executeRaw`ANALYZE events`;
      const after = new Date(Date.now() - 3600_000).toISOString();
      const before = new Date(Date.now() - 60_000).toISOString();
      const plan = await preparedPlan(harness.prisma, readEventsAfterQuery.text, `'webhook-dispatcher.events', '${after}', 0, '${before}', 500`, planCacheMode);

      const nodes = planNodes(plan);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Seq Scan');
      expect(nodes.filter((n) => n['Relation Name'] === 'events').map((n) => n['Index Name'])).toEqual(['events_created_at_idx']);
    },
  );
});
