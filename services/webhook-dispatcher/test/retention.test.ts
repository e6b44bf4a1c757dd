import { ManualClock } from '@pmatch/platform';
import { DispatcherHarness } from './support/harness';
import { HttpsReceiver } from './support/receiver';
import { TestCa } from './support/tls';

/** The delivery log is kept 30 days (docs/guide.md "Limits"), and the dispatcher, which owns it, deletes it. */

const DAY = 24 * 3600_000;

let ca: TestCa;
let receiver: HttpsReceiver;
let harness: DispatcherHarness;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  harness = await DispatcherHarness.start({
    clock: new ManualClock('2026-11-22T00:00:00Z'),
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_CA_FILE: ca.certFile, RETENTION_INTERVAL_MS: '3600000' },
  });
});

afterAll(async () => {
  await harness?.stop();
  await receiver?.close();
  ca?.remove();
});

test("when the retention sweep runs on the dispatcher's clock, then a delivery log of 31 days ago is deleted and one of 29 days ago kept", async () => {
  const orgId = await harness.createOrganisation();
  const endpoint = await harness.createEndpoint(orgId, receiver.url('/kept-30-days'));
  const start = harness.clock.now();
  const old = await harness.recordEvent(orgId);
  await harness.waitForAttempts(endpoint.id, old, 1);
  harness.clock.set(new Date(start.getTime() + 2 * DAY));
  const recent = await harness.recordEvent(orgId);
  await harness.waitForAttempts(endpoint.id, recent, 1);
  harness.clock.set(new Date(start.getTime() + 31 * DAY));

  const deleted = await harness.dispatcher.deleteExpiredDeliveryLog();

  expect(deleted).toBe(2);
  expect(await harness.attempts(endpoint.id, old)).toEqual([]);
  expect(await harness.delivery(endpoint.id, old)).toBeNull();
  expect(await harness.attempts(endpoint.id, recent)).toMatchObject([{ attempt: 1, statusCode: 200 }]);
  expect(await harness.delivery(endpoint.id, recent)).toMatchObject({ status: 'succeeded' });
  // The events themselves are orders-api's to delete.
  expect(await harness.prisma.event.count({ where: { id: { in: [old, recent] } } })).toBe(2);
});
