import { QUEUES, WEBHOOK_LIMITS } from '@pmatch/contracts';
import { waitFor } from '@pmatch/testkit';
import { DispatcherHarness } from './support/harness';
import { HttpsReceiver } from './support/receiver';
import { TestCa } from './support/tls';

/**
 * A resend from the delivery log (`webhook.resend`, from orders-api), in every state the event's
 * delivery to the endpoint can be in: waiting for its next retry, in flight, finished (succeeded or
 * failed), and of an endpoint switched off. Each request is taken in once and never dead-lettered.
 */

const WAITS = WEBHOOK_LIMITS.retryWaitsMs;
const MAX_ATTEMPTS = WAITS.length;

let ca: TestCa;
let receiver: HttpsReceiver;
let harness: DispatcherHarness;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  harness = await DispatcherHarness.start({
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_CA_FILE: ca.certFile, DELIVERY_TIMEOUT_MS: '2000' },
  });
});

afterAll(async () => {
  await harness?.stop();
  await receiver?.close();
  ca?.remove();
});

let pathCounter = 0;

/** An endpoint of a new organisation at a path of its own, answering as told. */
async function endpointAnswering(behaviour: Parameters<HttpsReceiver['answer']>[1]) {
  const orgId = await harness.createOrganisation();
  const path = `/resend/${++pathCounter}`;
  receiver.answer(path, behaviour);
  return { orgId, path, ...(await harness.createEndpoint(orgId, receiver.url(path))) };
}

const requestsTaken = () => harness.prisma.inbox.count({ where: { consumer: QUEUES.dispatcherRequests } });

/** Publishes a resend as orders-api does and resolves once the dispatcher has taken it in (committed its inbox row). */
async function resend(endpointId: string, eventId: string): Promise<void> {
  const before = await requestsTaken();
  await harness.publishRequest({ type: 'webhook.resend', endpoint_id: endpointId, event_id: eventId });
  await waitFor(async () => ((await requestsTaken()) > before ? true : undefined), { what: 'the resend to be taken in' });
}

/** Moves the clock to each next due attempt of the endpoint and runs it, until nothing is pending. */
async function runScheduleToEnd(endpointId: string): Promise<void> {
  for (let pass = 0; pass < 20; pass += 1) {
    const next = await harness.prisma.webhookDelivery.findFirst({ where: { endpointId, status: 'pending' }, orderBy: { nextAttemptAt: 'asc' } });
    if (next === null) return;
    harness.clock.set(next.nextAttemptAt!);
    await harness.dispatcher.runDueDeliveries();
  }
  throw new Error('the schedule did not end');
}

/** No resend request may end as a dead letter: each test ends by checking so. */
async function expectNoDeadLetters(): Promise<void> {
  expect(await harness.deadLetters(QUEUES.dispatcherRequests)).toBe(0);
}

describe('a resend of a delivery waiting for its next retry', () => {
  test('when it comes, then the retry goes out at once, not at its scheduled time, and the delivery succeeds', async () => {
    const endpoint = await endpointAnswering({ status: 500 });
    const eventId = await harness.recordEvent(endpoint.orgId);
    await harness.waitForAttempts(endpoint.id, eventId, 1);
    const waiting = await harness.delivery(endpoint.id, eventId);
    expect(waiting).toMatchObject({ status: 'pending', leasedUntil: null, attemptCount: 1 });
    expect(waiting!.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(harness.clock.now().getTime() + WAITS[1]!);
    receiver.answer(endpoint.path, { status: 200 });

    await resend(endpoint.id, eventId);

    const attempts = await harness.waitForAttempts(endpoint.id, eventId, 2);
    expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(attempts[1]!.attemptedAt).toEqual(harness.clock.now());
    expect(receiver.requestsTo(endpoint.path).map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId]);
    expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'succeeded', maxAttempts: MAX_ATTEMPTS, resendRequested: false });
    await expectNoDeadLetters();
  });

  test('when the resent attempt fails too, then the delivery keeps the rest of its schedule: the next retry waits as the third attempt would', async () => {
    const endpoint = await endpointAnswering({ status: 503 });
    const eventId = await harness.recordEvent(endpoint.orgId);
    await harness.waitForAttempts(endpoint.id, eventId, 1);

    await resend(endpoint.id, eventId);

    const [, second] = await harness.waitForAttempts(endpoint.id, eventId, 2);
    const delivery = await waitFor(async () => {
      const row = await harness.delivery(endpoint.id, eventId);
      return row?.leasedUntil === null && row.attemptCount === 2 ? row : undefined;
    });
    expect(delivery).toMatchObject({ status: 'pending', maxAttempts: MAX_ATTEMPTS, resendRequested: false });
    const wait = delivery.nextAttemptAt!.getTime() - second!.attemptedAt.getTime();
    expect(wait).toBeGreaterThanOrEqual(WAITS[2]!);
    expect(wait).toBeLessThanOrEqual(WAITS[2]! * 1.1);
    await expectNoDeadLetters();
  });
});

describe('a resend of a delivery in flight', () => {
  test('when it comes during an attempt, then no second attempt goes out beside it, every attempt is logged, and the next follows at once', async () => {
    const endpoint = await endpointAnswering('hang');
    const eventId = await harness.recordEvent(endpoint.orgId);
    await waitFor(() => (receiver.hanging(endpoint.path) > 0 ? true : undefined), { what: 'the first attempt to be in flight' });
    receiver.answer(endpoint.path, { status: 200 });

    await resend(endpoint.id, eventId);

    const attempts = await harness.waitForAttempts(endpoint.id, eventId, 2);
    expect(attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, null, 'no answer within 2000 ms'],
      [2, 200, null],
    ]);
    expect(attempts[1]!.attemptedAt.getTime()).toBe(attempts[0]!.attemptedAt.getTime());
    expect(receiver.requestsTo(endpoint.path).map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId]);
    expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'succeeded', leasedUntil: null, resendRequested: false });
    await expectNoDeadLetters();
  });
});

describe('a resend of a finished delivery', () => {
  test('when the delivery succeeded, then the event is sent again with the same webhook-id and the attempt is logged', async () => {
    const endpoint = await endpointAnswering({ status: 200 });
    const eventId = await harness.recordEvent(endpoint.orgId);
    await harness.waitForAttempts(endpoint.id, eventId, 1);

    await resend(endpoint.id, eventId);

    const attempts = await harness.waitForAttempts(endpoint.id, eventId, 2);
    expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 200],
      [2, 200],
    ]);
    expect(receiver.requestsTo(endpoint.path).map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId]);
    expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'succeeded', maxAttempts: 2 });
    await expectNoDeadLetters();
  });

  test('when the delivery failed after every attempt, then one more attempt goes out at once, and its success ends the delivery succeeded', async () => {
    const endpoint = await endpointAnswering({ status: 500 });
    const eventId = await harness.recordEvent(endpoint.orgId);
    await harness.waitForAttempts(endpoint.id, eventId, 1);
    await runScheduleToEnd(endpoint.id);
    expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'failed', attemptCount: MAX_ATTEMPTS, nextAttemptAt: null });
    receiver.answer(endpoint.path, { status: 204 });

    await resend(endpoint.id, eventId);

    const attempts = await harness.waitForAttempts(endpoint.id, eventId, MAX_ATTEMPTS + 1);
    expect(attempts.at(-1)).toMatchObject({ attempt: MAX_ATTEMPTS + 1, statusCode: 204, attemptedAt: harness.clock.now() });
    expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'succeeded', maxAttempts: MAX_ATTEMPTS + 1 });
    await expectNoDeadLetters();
  });
});

describe('a resend for an endpoint switched off', () => {
  test('when the endpoint was switched off after the resend was asked for, then nothing is sent, the request is taken in once, and after switching it on a resend delivers', async () => {
    const endpoint = await endpointAnswering({ status: 500 });
    const eventId = await harness.recordEvent(endpoint.orgId);
    await harness.waitForAttempts(endpoint.id, eventId, 1);
    receiver.answer(endpoint.path, { status: 200 });
    await harness.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { enabled: false, disabledReason: 'manual' } });

    await resend(endpoint.id, eventId);
    await harness.dispatcher.runDueDeliveries();

    const skipped = await waitFor(async () => {
      const row = await harness.delivery(endpoint.id, eventId);
      return row?.status === 'skipped' ? row : undefined;
    });
    expect(skipped).toMatchObject({ attemptCount: 1, nextAttemptAt: null, resendRequested: false });
    expect(await harness.attempts(endpoint.id, eventId)).toHaveLength(1);
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(1);

    await harness.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { enabled: true, disabledReason: null } });
    await resend(endpoint.id, eventId);

    const attempts = await harness.waitForAttempts(endpoint.id, eventId, 2);
    expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'succeeded', maxAttempts: 2 });
    await expectNoDeadLetters();
  });
});
