import { WEBHOOK_LIMITS } from '@pmatch/contracts';
import { ManualClock, SecretBox } from '@pmatch/platform';
import { waitFor } from '@pmatch/testkit';
import { MAIL_SEND_DEADLINE_MS } from '../src/outbound/mailer';
import { DispatcherHarness, OWNER_EMAIL } from './support/harness';
import { HttpsReceiver } from './support/receiver';
import { SmtpListener } from './support/smtp';
import { TestCa } from './support/tls';

/** Retries, e-mails and the 72-hour switch-off, on a ManualClock: days pass in milliseconds. */

const HOUR = 3600_000;
const WAITS = WEBHOOK_LIMITS.retryWaitsMs;

let ca: TestCa;
let receiver: HttpsReceiver;
let smtp: SmtpListener;
let harness: DispatcherHarness;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  smtp = await SmtpListener.start();
  harness = await DispatcherHarness.start({
    clock: new ManualClock('2026-11-22T00:00:00Z'),
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_CA_FILE: ca.certFile, SMTP_URL: smtp.url, DELIVERY_TIMEOUT_MS: '5000' },
  });
});

afterAll(async () => {
  await harness?.stop();
  await receiver?.close();
  await smtp?.close();
  ca?.remove();
});

let pathCounter = 0;

async function failingEndpoint() {
  const orgId = await harness.createOrganisation();
  const path = `/failing/${++pathCounter}`;
  receiver.answer(path, { status: 500 });
  return { orgId, path, ...(await harness.createEndpoint(orgId, receiver.url(path))) };
}

/** Moves the clock to each next due attempt of the endpoint and runs it, until nothing is pending. */
async function runScheduleToEnd(endpointId: string, afterEachPass: () => Promise<void> = async () => undefined): Promise<void> {
  for (let pass = 0; pass < 40; pass += 1) {
    const next = await harness.prisma.webhookDelivery.findFirst({ where: { endpointId, status: 'pending' }, orderBy: { nextAttemptAt: 'asc' } });
    if (next === null) return;
    harness.clock.set(next.nextAttemptAt!);
    await harness.dispatcher.runDueDeliveries();
    await afterEachPass();
  }
  throw new Error('the schedule did not end');
}

async function recordAndAttemptOnce(orgId: string, endpointId: string): Promise<string> {
  const eventId = await harness.recordEvent(orgId);
  await harness.waitForAttempts(endpointId, eventId, 1);
  return eventId;
}

/** The message text without header folding and quoted-printable soft line breaks. */
const unfolded = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/\r?\n[ \t]+/g, ' ');
const mailsWithSubject = (prefix: string) => smtp.mails.filter((m) => unfolded(m.raw).includes(`Subject: ${prefix}`));

test('when every attempt fails, then attempts come after 1 min, 5 min, 30 min, 2 h, 6 h, 12 h and 24 h (at most +10%), the delivery ends failed, and the owner gets one e-mail for two such deliveries', async () => {
  const endpoint = await failingEndpoint();
  const first = await recordAndAttemptOnce(endpoint.orgId, endpoint.id);
  harness.clock.advance(60_000);
  const second = await recordAndAttemptOnce(endpoint.orgId, endpoint.id);

  await runScheduleToEnd(endpoint.id);

  for (const eventId of [first, second]) {
    const attempts = await harness.attempts(endpoint.id, eventId);
    expect(attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, 500, 'HTTP 500']));
    const waits = attempts.slice(1).map((a, i) => a.attemptedAt.getTime() - attempts[i]!.attemptedAt.getTime());
    waits.forEach((wait, i) => {
      expect(wait).toBeGreaterThanOrEqual(WAITS[i + 1]!);
      expect(wait).toBeLessThanOrEqual(WAITS[i + 1]! * 1.1);
    });
    expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'failed', attemptCount: 8, nextAttemptAt: null });
  }
  harness.clock.advance(48 * HOUR);
  await harness.dispatcher.runDueDeliveries();
  expect(await harness.attempts(endpoint.id, first)).toHaveLength(8);
  expect(new Set(receiver.requestsTo(endpoint.path).map((r) => r.headers['webhook-id']))).toEqual(new Set([first, second]));

  await harness.dispatcher.sendDueEmails();

  const mails = mailsWithSubject(`Webhook delivery failed: ${receiver.url(endpoint.path)}`);
  expect(mails).toHaveLength(1);
  expect(mails[0]!.to).toEqual([OWNER_EMAIL]);
  const namedEvent = [first, second].filter((id) => unfolded(mails[0]!.raw).includes(id));
  expect(namedEvent).toHaveLength(1);
  expect(await harness.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({ enabled: true });
});

test('when an endpoint has failed for 72 hours, then it is switched off with an e-mail, its pending delivery is skipped, and after switching it on by hand a missed event is resent from the log', async () => {
  const endpoint = await failingEndpoint();
  const failingSince = harness.clock.now();
  const early = await recordAndAttemptOnce(endpoint.orgId, endpoint.id);
  await runScheduleToEnd(endpoint.id);
  expect((await harness.delivery(endpoint.id, early))!.status).toBe('failed');
  // At 60 h the late event's 6th attempt still falls before 72 h and its 7th after, whatever the jitter.
  harness.clock.set(new Date(failingSince.getTime() + 60 * HOUR));

  const late = await recordAndAttemptOnce(endpoint.orgId, endpoint.id);
  await runScheduleToEnd(endpoint.id, async () => {
    const [last] = (await harness.attempts(endpoint.id, late)).slice(-1);
    const row = await harness.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    const failedFor = last!.attemptedAt.getTime() - failingSince.getTime();
    expect({ failedForHours: failedFor / HOUR, enabled: row.enabled }).toEqual({ failedForHours: failedFor / HOUR, enabled: failedFor < 72 * HOUR });
  });

  const endpointRow = await harness.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
  expect(endpointRow).toMatchObject({ enabled: false, disabledReason: 'failing', failingSince });
  const lateDelivery = await harness.delivery(endpoint.id, late);
  expect(lateDelivery!.status).toBe('skipped');
  expect(lateDelivery!.attemptCount).toBe(7);
  await harness.dispatcher.sendDueEmails();
  const offMails = mailsWithSubject(`Webhook endpoint switched off: ${receiver.url(endpoint.path)}`);
  expect(offMails).toHaveLength(1);
  expect(offMails[0]!.to).toEqual([OWNER_EMAIL]);

  const missed = await harness.recordEvent(endpoint.orgId);
  await harness.waitForEventReceived(missed);
  expect(await harness.delivery(endpoint.id, missed)).toBeNull();

  receiver.answer(endpoint.path, { status: 204 });
  await harness.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { enabled: true, disabledReason: null, failingSince: null } });
  await harness.publishRequest({ type: 'webhook.resend', endpoint_id: endpoint.id, event_id: missed });

  const [resent] = await harness.waitForAttempts(endpoint.id, missed, 1);
  expect(resent).toMatchObject({ attempt: 1, statusCode: 204, error: null });
  expect(await harness.delivery(endpoint.id, missed)).toMatchObject({ status: 'succeeded', maxAttempts: 1 });
  expect(receiver.requestsTo(endpoint.path).at(-1)!.headers['webhook-id']).toBe(missed);
  expect(await harness.delivery(endpoint.id, late)).toMatchObject({ status: 'skipped' });
});

test('when the SMTP server is down, then a notice stays queued and goes out on a later pass', async () => {
  const endpoint = await failingEndpoint();
  await recordAndAttemptOnce(endpoint.orgId, endpoint.id);
  await runScheduleToEnd(endpoint.id);
  const port = smtp.port;
  await smtp.close();

  await harness.dispatcher.sendDueEmails();

  const queued = await harness.prisma.webhookEmail.findFirstOrThrow({ where: { endpointId: endpoint.id } });
  expect(queued).toMatchObject({ kind: 'delivery_failed', sentAt: null, attemptCount: 1, lastError: expect.any(String) });
  smtp = await SmtpListener.start(port);
  harness.clock.set(queued.nextAttemptAt!);

  await harness.dispatcher.sendDueEmails();

  expect(await harness.prisma.webhookEmail.findUniqueOrThrow({ where: { id: queued.id } })).toMatchObject({ sentAt: harness.clock.now(), nextAttemptAt: null });
  expect(mailsWithSubject(`Webhook delivery failed: ${receiver.url(endpoint.path)}`)).toHaveLength(1);
});

test('when an endpoint failed, then nothing was attempted for more than 72 hours, and it fails again, then it is switched off at once: a quiet spell is no success', async () => {
  // Switched off when only failures occur for 72 hours. Only a 2xx (or switching
  // the endpoint on by hand) ends a run of failures; silence in between leaves it running.
  const endpoint = await failingEndpoint();
  const failingSince = harness.clock.now();
  const first = await recordAndAttemptOnce(endpoint.orgId, endpoint.id);
  await runScheduleToEnd(endpoint.id);
  expect(await harness.delivery(endpoint.id, first)).toMatchObject({ status: 'failed' });
  expect(await harness.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({ enabled: true, failingSince });
  harness.clock.set(new Date(failingSince.getTime() + 80 * HOUR));

  const late = await recordAndAttemptOnce(endpoint.orgId, endpoint.id);

  expect(await harness.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).toMatchObject({
    enabled: false,
    disabledReason: 'failing',
    failingSince,
  });
  expect(await harness.delivery(endpoint.id, late)).toMatchObject({ status: 'skipped', attemptCount: 1 });
});

test('when an attempt cannot even be signed (its secret no longer decrypts), then it is logged as a failure without the secret, follows the schedule to failed, and the owner is told', async () => {
  const orgId = await harness.createOrganisation();
  const path = `/unsendable/${++pathCounter}`;
  const endpoint = await harness.createEndpoint(orgId, receiver.url(path));
  // As after SECRETS_KEY was changed without re-sealing the secrets.
  const sealedWithOldKey = new SecretBox('the-secrets-key-before-the-change').seal(endpoint.secret, { kind: 'webhook_endpoint', id: endpoint.id });
  await harness.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { secretEncrypted: sealedWithOldKey } });

  const eventId = await recordAndAttemptOnce(orgId, endpoint.id);
  await runScheduleToEnd(endpoint.id);

  const attempts = await harness.attempts(endpoint.id, eventId);
  expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, null]));
  expect(new Set(attempts.map((a) => a.error))).toEqual(
    new Set(["not sent: the endpoint's signing secret could not be decrypted (a fault on our side, not of the endpoint)"]),
  );
  expect(attempts[0]!.error).not.toContain(endpoint.secret.slice('whsec_'.length, 20));
  expect(await harness.delivery(endpoint.id, eventId)).toMatchObject({ status: 'failed', attemptCount: 8, nextAttemptAt: null });
  expect(receiver.requestsTo(path)).toEqual([]);
  await harness.dispatcher.sendDueEmails();
  expect(mailsWithSubject(`Webhook delivery failed: ${receiver.url(path)}`)).toHaveLength(1);
});

test('when an e-mail is slow to send, then only it is leased (for longer than a send may take), and another dispatcher sends the next one meanwhile, each once', async () => {
  await harness.dispatcher.sendDueEmails();
  const orgId = await harness.createOrganisation();
  const endpoint = await harness.createEndpoint(orgId, receiver.url(`/mailed/${++pathCounter}`));
  const subjects = [`Slow notice ${pathCounter}`, `Next notice ${pathCounter}`];
  for (const [i, subject] of subjects.entries()) {
    await harness.prisma.webhookEmail.create({
      data: {
        id: `eml_lease${i}${pathCounter}`,
        endpointId: endpoint.id,
        kind: 'delivery_failed',
        recipient: OWNER_EMAIL,
        subject,
        body: 'b',
        nextAttemptAt: new Date(harness.clock.now().getTime() - (2 - i) * 1000),
        createdAt: harness.clock.now(),
      },
    });
  }
  smtp.hold();
  try {
    const firstPass = harness.dispatcher.sendDueEmails();
    await waitFor(() => (smtp.held.length === 1 ? true : undefined), { what: 'the first notice to reach the slow mail server' });
    const leased = await harness.prisma.webhookEmail.findMany({ where: { endpointId: endpoint.id, nextAttemptAt: { gt: harness.clock.now() } } });
    expect(leased.map((e) => e.subject)).toEqual([subjects[0]]);
    expect(leased[0]!.nextAttemptAt!.getTime() - harness.clock.now().getTime()).toBeGreaterThan(MAIL_SEND_DEADLINE_MS);

    const otherDispatcher = harness.dispatcher.sendDueEmails();

    await waitFor(() => (smtp.held.length === 2 ? true : undefined), { what: 'the next notice to be sent by the other dispatcher' });
    smtp.release();
    expect(await Promise.all([firstPass, otherDispatcher])).toEqual([1, 1]);
  } finally {
    smtp.release();
  }
  for (const subject of subjects) expect(mailsWithSubject(subject)).toHaveLength(1);
});
