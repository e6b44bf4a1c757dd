import { Webhook } from 'standardwebhooks';
import { WEBHOOK_LIMITS, newId } from '@pmatch/contracts';
import { eventObject } from '@pmatch/db';
import { newSigningSecret } from '@pmatch/platform';
import { waitFor } from '@pmatch/testkit';
import { TEST_SENDS_KEPT, recordTestSend } from '../src/data/test-sends';
import { DispatcherHarness } from './support/harness';
import { HttpsReceiver, type ReceivedRequest } from './support/receiver';
import { TestCa } from './support/tls';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let ca: TestCa;
let receiver: HttpsReceiver;
let selfSigned: HttpsReceiver;
let harness: DispatcherHarness;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  selfSigned = await HttpsReceiver.start(ca.selfSignedCertificate());
  harness = await DispatcherHarness.start({
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_CA_FILE: ca.certFile, DELIVERY_TIMEOUT_MS: '2000' },
    seams: { resolveHost: resolveFromTable },
  });
});

afterAll(async () => {
  await harness?.stop();
  await receiver?.close();
  await selfSigned?.close();
  ca?.remove();
});

/** Stand-in DNS (no test asks real DNS): the receiver's certificate names receiver.test. */
const resolveFromTable = async (host: string): Promise<string[]> => {
  if (host === 'receiver.test') return ['::1', '127.0.0.1'];
  if (host === 'impostor.test') return ['127.0.0.1'];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

let pathCounter = 0;
const freshPath = () => `/hooks/${++pathCounter}`;

/**
 * Whether `secret` verifies one signature entry of a received request with the official library,
 * whose 5-minute timestamp check reads the wall clock: it is set to `at`, the dispatcher's time.
 */
function verifies(secret: string, request: ReceivedRequest, entry: string, at: Date): boolean {
  const wallClock = jest.spyOn(Date, 'now').mockReturnValue(at.getTime());
  try {
    new Webhook(secret).verify(request.body, { ...(request.headers as Record<string, string>), 'webhook-signature': entry });
    return true;
  } catch {
    return false;
  } finally {
    wallClock.mockRestore();
  }
}

describe('delivery format', () => {
  test('when order.paid is recorded, then it arrives once, signed over the exact body, and verifies with standardwebhooks', async () => {
    const orgId = await harness.createOrganisation();
    const path = freshPath();
    const endpoint = await harness.createEndpoint(orgId, receiver.url(path));

    const eventId = await harness.recordEvent(orgId, 'order.paid');

    const [attempt] = await harness.waitForAttempts(endpoint.id, eventId, 1);
    const [request] = receiver.requestsTo(path);
    expect(request!.headers['webhook-id']).toBe(eventId);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(Number(request!.headers['webhook-timestamp'])).toBe(Math.floor(harness.clock.now().getTime() / 1000));
    const verified = new Webhook(endpoint.secret).verify(request!.body, request!.headers as Record<string, string>);
    const stored = await harness.prisma.event.findUniqueOrThrow({ where: { id: eventId } });
    expect(verified).toEqual(eventObject(stored));
    expect(verified).toMatchObject({ id: eventId, object: 'event', type: 'order.paid', livemode: false, data: { object: { status: 'paid' } } });
    expect(attempt).toMatchObject({ attempt: 1, statusCode: 200, error: null });
    expect((await harness.delivery(endpoint.id, eventId))!.status).toBe('succeeded');
  });

  test('when the secret was rotated within 24 hours, then a delivery carries two signatures, each valid with its own secret, and once the overlap has passed only the new one signs', async () => {
    const orgId = await harness.createOrganisation();
    const path = freshPath();
    const endpoint = await harness.createEndpoint(orgId, receiver.url(path));
    const newSecret = newSigningSecret();
    const rotatedAt = harness.clock.now();
    const overlapEnds = new Date(rotatedAt.getTime() + 24 * HOUR);
    await harness.setSecrets(endpoint.id, newSecret, [{ secret: endpoint.secret, expiresAt: overlapEnds }]);

    const eventId = await harness.recordEvent(orgId);

    await harness.waitForAttempts(endpoint.id, eventId, 1);
    const [during] = receiver.requestsTo(path);
    const [first, second, ...rest] = String(during!.headers['webhook-signature']).split(' ');
    expect(rest).toEqual([]);
    expect(verifies(newSecret, during!, first!, rotatedAt)).toBe(true);
    expect(verifies(endpoint.secret, during!, second!, rotatedAt)).toBe(true);
    expect(verifies(endpoint.secret, during!, first!, rotatedAt)).toBe(false);

    harness.clock.set(overlapEnds);
    try {
      const later = await harness.recordEvent(orgId);

      await harness.waitForAttempts(endpoint.id, later, 1);
      const [, after] = receiver.requestsTo(path);
      const signatures = String(after!.headers['webhook-signature']).split(' ');
      expect(signatures).toHaveLength(1);
      expect(verifies(newSecret, after!, signatures[0]!, overlapEnds)).toBe(true);
      expect(verifies(endpoint.secret, after!, signatures[0]!, overlapEnds)).toBe(false);
    } finally {
      harness.clock.set(rotatedAt);
    }
  });

  test('when a name resolves to two addresses and the first refuses connections, then the next is used and the certificate is checked against the name', async () => {
    const orgId = await harness.createOrganisation();
    const path = freshPath();
    const endpoint = await harness.createEndpoint(orgId, `https://receiver.test:${receiver.port}${path}`);

    const eventId = await harness.recordEvent(orgId);

    const [attempt] = await harness.waitForAttempts(endpoint.id, eventId, 1);
    expect(attempt).toMatchObject({ statusCode: 200, error: null });
    const [request] = receiver.requestsTo(path);
    expect(request!.servername).toBe('receiver.test');
    expect(request!.headers.host).toBe(`receiver.test:${receiver.port}`);
  });

  test('when the certificate does not name the host, then the attempt fails, although it names the pinned address', async () => {
    const orgId = await harness.createOrganisation();
    const path = freshPath();
    const endpoint = await harness.createEndpoint(orgId, `https://impostor.test:${receiver.port}${path}`);

    const eventId = await harness.recordEvent(orgId);

    const [attempt] = await harness.waitForAttempts(endpoint.id, eventId, 1);
    expect(attempt).toMatchObject({ statusCode: null, error: expect.stringMatching(/ERR_TLS_CERT_ALTNAME_INVALID/) });
    expect(receiver.requestsTo(path)).toEqual([]);
  });

  test('when an organisation has more endpoints than registration allows, then each is sent the event, and a redelivered message adds nothing', async () => {
    const orgId = await harness.createOrganisation();
    const paths = Array.from({ length: WEBHOOK_LIMITS.endpointsPerMode + 2 }, freshPath);
    const endpoints = [];
    for (const path of paths) endpoints.push(await harness.createEndpoint(orgId, receiver.url(path)));
    const received = await harness.metric('webhook_events_received_total');

    const eventId = await harness.recordEvent(orgId);

    for (const endpoint of endpoints) await harness.waitForAttempts(endpoint.id, eventId, 1);
    await harness.republishEvent(eventId);
    await waitFor(async () => ((await harness.metric('webhook_events_received_total')) >= received + 2 ? true : undefined));
    await harness.dispatcher.runDueDeliveries();
    expect(await harness.prisma.webhookDelivery.count({ where: { eventId } })).toBe(endpoints.length);
    expect(paths.map((path) => receiver.requestsTo(path).map((r) => r.headers['webhook-id']))).toEqual(paths.map(() => [eventId]));
  });

  test('when one message announces several events, then each is sent once, and the message redelivered adds nothing', async () => {
    const orgId = await harness.createOrganisation();
    const path = freshPath();
    const endpoint = await harness.createEndpoint(orgId, receiver.url(path));
    const received = await harness.metric('webhook_events_received_total');

    const eventIds = await harness.recordEvents(orgId, 3);

    expect(await harness.prisma.outbox.count({ where: { messageId: { in: eventIds } } })).toBe(1);
    for (const eventId of eventIds) await harness.waitForAttempts(endpoint.id, eventId, 1);
    await harness.republishEvent(eventIds[0]!);
    await waitFor(async () => ((await harness.metric('webhook_events_received_total')) >= received + 6 ? true : undefined));
    await harness.dispatcher.runDueDeliveries();
    expect(await harness.prisma.webhookDelivery.count({ where: { eventId: { in: eventIds } } })).toBe(3);
    expect(
      receiver
        .requestsTo(path)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual([...eventIds].sort());
  });

  test('when an endpoint selected other types, then it is not sent this one', async () => {
    const orgId = await harness.createOrganisation();
    const selective = await harness.createEndpoint(orgId, receiver.url(freshPath()), { enabledEvents: ['order.created'] });
    const everything = await harness.createEndpoint(orgId, receiver.url(freshPath()));

    const eventId = await harness.recordEvent(orgId, 'order.paid');

    await harness.waitForAttempts(everything.id, eventId, 1);
    expect(await harness.delivery(selective.id, eventId)).toBeNull();
  });
});

describe('failures', () => {
  test('when a receiver answers 302, 500, not in time, or with a self-signed certificate, then each is a failed attempt, retried in a minute', async () => {
    const orgId = await harness.createOrganisation();
    const [redirect, error, hang, target] = [freshPath(), freshPath(), freshPath(), freshPath()];
    receiver.answer(redirect, { status: 302, headers: { location: receiver.url(target) } });
    receiver.answer(error, { status: 500 });
    receiver.answer(hang, 'hang');
    const endpoints = {
      redirect: await harness.createEndpoint(orgId, receiver.url(redirect)),
      error: await harness.createEndpoint(orgId, receiver.url(error)),
      timeout: await harness.createEndpoint(orgId, receiver.url(hang)),
      selfSigned: await harness.createEndpoint(orgId, selfSigned.url('/hooks')),
    };
    const failedAt = harness.clock.now();

    const eventId = await harness.recordEvent(orgId);

    const outcomes: Record<string, unknown> = {};
    const retryWaits: number[] = [];
    for (const [name, endpoint] of Object.entries(endpoints)) {
      const [attempt] = await harness.waitForAttempts(endpoint.id, eventId, 1);
      const delivery = await harness.delivery(endpoint.id, eventId);
      outcomes[name] = { statusCode: attempt!.statusCode, error: attempt!.error, status: delivery!.status };
      retryWaits.push(delivery!.nextAttemptAt!.getTime() - failedAt.getTime());
    }
    expect(outcomes).toEqual({
      redirect: { statusCode: 302, error: expect.stringMatching(/redirect \(302\) not followed/), status: 'pending' },
      error: { statusCode: 500, error: 'HTTP 500', status: 'pending' },
      timeout: { statusCode: null, error: 'no answer within 2000 ms', status: 'pending' },
      selfSigned: { statusCode: null, error: expect.stringMatching(/self[- ]signed/i), status: 'pending' },
    });
    for (const wait of retryWaits) {
      expect(wait).toBeGreaterThanOrEqual(MINUTE);
      expect(wait).toBeLessThanOrEqual(1.1 * MINUTE);
    }
    expect(receiver.requestsTo(target)).toEqual([]);
    expect(selfSigned.requests).toEqual([]);
  });
});

describe('run of failures', () => {
  test('when an attempt succeeds after a failure, then the run of failures ends, and a success without one leaves the endpoint row unwritten', async () => {
    const orgId = await harness.createOrganisation();
    const path = freshPath();
    receiver.answer(path, { status: 500 });
    const endpoint = await harness.createEndpoint(orgId, receiver.url(path));
    const failedAt = harness.clock.now();
    const eventId = await harness.recordEvent(orgId);
    await harness.waitForAttempts(endpoint.id, eventId, 1);
    expect(await harness.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({ failingSince: failedAt });

    receiver.answer(path, { status: 200 });
    harness.clock.set((await harness.delivery(endpoint.id, eventId))!.nextAttemptAt!);
    await harness.dispatcher.runDueDeliveries();

    expect(await harness.attempts(endpoint.id, eventId)).toMatchObject([{ statusCode: 500 }, { statusCode: 200 }]);
    expect(await harness.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({ failingSince: null });
    const rowVersion = () => harness.prisma.$queryRaw<{ xmin: string }[]>`SELECT xmin::text FROM webhook_endpoints WHERE id = ${endpoint.id}`;
    const before = await rowVersion();
    const next = await harness.recordEvent(orgId);
    await harness.waitForAttempts(endpoint.id, next, 1);
    expect(await rowVersion()).toEqual(before);
  });
});

describe('switched-off endpoints', () => {
  test('when an endpoint is switched off or deleted while its delivery waits for a retry, then the delivery is never sent and the poll marks it skipped', async () => {
    const orgId = await harness.createOrganisation();
    const eventId = await harness.recordEvent(orgId);
    await harness.waitForEventReceived(eventId);
    const [offPath, deletedPath] = [freshPath(), freshPath()];
    const off = await harness.createEndpoint(orgId, receiver.url(offPath));
    const deleted = await harness.createEndpoint(orgId, receiver.url(deletedPath));
    for (const endpoint of [off, deleted]) {
      await harness.prisma.webhookDelivery.create({
        data: { id: newId('delivery'), endpointId: endpoint.id, eventId, status: 'pending', nextAttemptAt: new Date(harness.clock.now().getTime() + MINUTE) },
      });
    }
    await harness.prisma.webhookEndpoint.update({ where: { id: off.id }, data: { enabled: false, disabledReason: 'failing' } });
    await harness.prisma.webhookEndpoint.update({ where: { id: deleted.id }, data: { deletedAt: harness.clock.now() } });

    harness.clock.advance(MINUTE);
    await harness.dispatcher.runDueDeliveries();

    expect([...receiver.requestsTo(offPath), ...receiver.requestsTo(deletedPath)]).toEqual([]);
    for (const endpoint of [off, deleted]) {
      expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'skipped', nextAttemptAt: null, attemptCount: 0 });
    }
  });
});

describe('claim passes', () => {
  const quietly = (limits: Record<string, string>) =>
    DispatcherHarness.start({
      env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_CA_FILE: ca.certFile, DELIVERY_POLL_INTERVAL_MS: String(HOUR), ...limits },
    });

  test('when the events of many decisions arrive together, then a few claim passes send them all, not one pass per event or per attempt', async () => {
    const quiet = await quietly({ DELIVERY_CONCURRENCY: '64', DELIVERY_CONCURRENCY_PER_ENDPOINT: '20' });
    try {
      const orgId = await quiet.createOrganisation();
      const endpoints = [];
      for (let i = 0; i < 3; i += 1) endpoints.push(await quiet.createEndpoint(orgId, receiver.url(freshPath())));
      await waitFor(async () => ((await quiet.metric('webhook_delivery_claim_passes_total')) > 0 ? true : undefined));
      const passesBefore = await quiet.metric('webhook_delivery_claim_passes_total');

      const eventIds = await quiet.recordEvents(orgId, 10);

      for (const endpoint of endpoints) for (const eventId of eventIds) await quiet.waitForAttempts(endpoint.id, eventId, 1);
      await waitFor(async () => ((await quiet.metric('webhook_delivery_attempts_in_flight')) === 0 ? true : undefined));
      const passes = (await quiet.metric('webhook_delivery_claim_passes_total')) - passesBefore;
      expect(passes).toBeGreaterThanOrEqual(1);
      expect(passes).toBeLessThan(eventIds.length);
    } finally {
      await quiet.stop();
    }
  });

  test('when an endpoint is at its limit of attempts in flight, then each finished attempt lets the next one go without waiting for the poll', async () => {
    const quiet = await quietly({ DELIVERY_CONCURRENCY_PER_ENDPOINT: '1' });
    try {
      const orgId = await quiet.createOrganisation();
      const path = freshPath();
      const endpoint = await quiet.createEndpoint(orgId, receiver.url(path));

      const eventIds = await quiet.recordEvents(orgId, 4);

      for (const eventId of eventIds) await quiet.waitForAttempts(endpoint.id, eventId, 1);
      expect(new Set(receiver.requestsTo(path).map((r) => r.headers['webhook-id']))).toEqual(new Set(eventIds));
    } finally {
      await quiet.stop();
    }
  });
});

describe('isolation', () => {
  /** A dispatcher of its own (limits, answer deadline 10 s), and a fresh receiver afterwards, which drops every hanging request. */
  async function withIsolatedDispatcher(env: Record<string, string>, run: (isolated: DispatcherHarness) => Promise<void>): Promise<void> {
    const isolated = await DispatcherHarness.start({ env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_CA_FILE: ca.certFile, ...env } });
    try {
      await run(isolated);
    } finally {
      await receiver.close().catch(() => undefined);
      receiver = await HttpsReceiver.start(ca.issueServerCertificate());
      await isolated.stop();
    }
  }

  test("when more endpoints hang than the slots could hold at their per-endpoint limit, then a healthy endpoint's deliveries go out while they still hang", async () => {
    await withIsolatedDispatcher({ DELIVERY_CONCURRENCY: '4', DELIVERY_CONCURRENCY_PER_ENDPOINT: '2' }, async (isolated) => {
      const hangPaths = [freshPath(), freshPath(), freshPath()];
      for (const path of hangPaths) receiver.answer(path, 'hang');
      const orgId = await isolated.createOrganisation();
      const hanging = [];
      for (const path of hangPaths) hanging.push(await isolated.createEndpoint(orgId, receiver.url(path), { enabledEvents: ['order.paid'] }));
      const healthyPath = freshPath();
      const healthy = await isolated.createEndpoint(orgId, receiver.url(healthyPath), { enabledEvents: ['order.created'] });
      // The hanging endpoints' deliveries are older, so they come first in due order.
      await isolated.recordEvents(orgId, 4, 'order.paid');
      await waitFor(() => (hangPaths.every((path) => receiver.hanging(path) > 0) ? true : undefined), { what: 'every hanging endpoint to be sent one' });

      const healthyEvents = await isolated.recordEvents(orgId, 3, 'order.created');

      for (const eventId of healthyEvents) await isolated.waitForAttempts(healthy.id, eventId, 1);
      expect(
        receiver
          .requestsTo(healthyPath)
          .map((r) => r.headers['webhook-id'])
          .sort(),
      ).toEqual([...healthyEvents].sort());
      // Not one hanging attempt has ended: the healthy endpoint did not wait for a slot to time out.
      expect(await isolated.prisma.webhookDelivery.count({ where: { endpointId: { in: hanging.map((e) => e.id) }, attemptCount: { gt: 0 } } })).toBe(0);
      expect(hangPaths.map((path) => receiver.hanging(path))).toEqual([1, 1, 1]);
    });
  });

  test("when a test event's URL hangs, then it holds neither the request queue nor more than its endpoint's slot: a resend goes out meanwhile", async () => {
    await withIsolatedDispatcher({ DISPATCHER_PREFETCH: '1' }, async (isolated) => {
      const hangPath = freshPath();
      receiver.answer(hangPath, 'hang');
      const orgId = await isolated.createOrganisation();
      const hanging = await isolated.createEndpoint(orgId, receiver.url(hangPath), { enabledEvents: ['order.created'] });
      const healthyPath = freshPath();
      const healthy = await isolated.createEndpoint(orgId, receiver.url(healthyPath));
      const eventId = await isolated.recordEvent(orgId, 'order.paid');
      await isolated.waitForAttempts(healthy.id, eventId, 1);
      const testEvent = (n: number) => ({
        id: `evt_test_${String(n).padStart(24, '0')}`,
        object: 'event',
        type: 'webhook.test',
        livemode: false,
        created_at: isolated.clock.now().toISOString(),
        data: { object: { message: 'test' } },
      });
      await isolated.publishRequest({ type: 'webhook.send_test', endpoint_id: hanging.id, event: testEvent(1) });
      await isolated.publishRequest({ type: 'webhook.send_test', endpoint_id: hanging.id, event: testEvent(2) });
      await waitFor(() => (receiver.hanging(hangPath) > 0 ? true : undefined), { what: 'the first test event to hang' });

      await isolated.publishRequest({ type: 'webhook.resend', endpoint_id: healthy.id, event_id: eventId });

      await isolated.waitForAttempts(healthy.id, eventId, 2);
      expect(receiver.hanging(hangPath)).toBe(1);
      expect(receiver.requestsTo(hangPath).map((r) => r.headers['webhook-id'])).toEqual([testEvent(1).id]);
    });
  });
});

describe('at-least-once', () => {
  test('when a dispatcher claimed a delivery and died before recording it, then it is sent after the lease ends, with the same webhook-id', async () => {
    const orgId = await harness.createOrganisation();
    const eventId = await harness.recordEvent(orgId);
    await harness.waitForEventReceived(eventId);
    const path = freshPath();
    const endpoint = await harness.createEndpoint(orgId, receiver.url(path));
    // What a claim leaves behind: the delivery leased to its claimer, which then never came back.
    await harness.prisma.webhookDelivery.create({
      data: { id: newId('delivery'), endpointId: endpoint.id, eventId, status: 'pending', nextAttemptAt: new Date(harness.clock.now().getTime() + MINUTE) },
    });

    await harness.dispatcher.runDueDeliveries();
    expect(receiver.requestsTo(path)).toEqual([]);
    harness.clock.advance(MINUTE);
    await harness.dispatcher.runDueDeliveries();

    expect(receiver.requestsTo(path).map((r) => r.headers['webhook-id'])).toEqual([eventId]);
    expect(await harness.attempts(endpoint.id, eventId)).toMatchObject([{ attempt: 1, statusCode: 200 }]);
  });
});

describe('requests from the API', () => {
  test('when a test event is requested, then it is sent signed, recorded as a test send with the answer, and nothing is written to the delivery log', async () => {
    const orgId = await harness.createOrganisation();
    const path = freshPath();
    const endpoint = await harness.createEndpoint(orgId, receiver.url(path));
    const event = {
      id: 'evt_test_abcdefghijklmnopqrstuvwx',
      object: 'event',
      type: 'webhook.test',
      livemode: false,
      created_at: harness.clock.now().toISOString(),
      data: { object: { message: 'test' } },
    };

    await harness.publishRequest({ type: 'webhook.send_test', endpoint_id: endpoint.id, event });

    const [request] = await waitFor(() => (receiver.requestsTo(path).length > 0 ? receiver.requestsTo(path) : undefined));
    expect(new Webhook(endpoint.secret).verify(request!.body, request!.headers as Record<string, string>)).toEqual(event);
    expect(request!.headers['webhook-id']).toBe(event.id);
    expect(await harness.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(0);
    const sent = await waitFor(() => harness.prisma.webhookTestSend.findFirst({ where: { endpointId: endpoint.id } }).then((row) => row ?? undefined));
    expect(sent).toMatchObject({ eventId: event.id, statusCode: 200, error: null });
  });

  test('when more test sends than are kept are recorded for an endpoint, then only its latest are left, and those of another endpoint stay', async () => {
    const orgId = await harness.createOrganisation();
    const [one, other] = [await harness.createEndpoint(orgId, receiver.url(freshPath())), await harness.createEndpoint(orgId, receiver.url(freshPath()))];
    const send = (endpointId: string, n: number) =>
      recordTestSend(harness.prisma, { endpointId, eventId: `evt_test_${n}`, statusCode: 200, durationMs: 1, error: null, sentAt: harness.clock.now() });
    await send(other.id, 0);
    for (let n = 1; n <= TEST_SENDS_KEPT + 2; n++) await send(one.id, n);

    const kept = await harness.prisma.webhookTestSend.findMany({ where: { endpointId: one.id }, orderBy: { id: 'asc' } });
    expect(kept.map((k) => k.eventId)).toEqual(Array.from({ length: TEST_SENDS_KEPT }, (_, i) => `evt_test_${i + 3}`));
    expect(await harness.prisma.webhookTestSend.count({ where: { endpointId: other.id } })).toBe(1);
  });
});
