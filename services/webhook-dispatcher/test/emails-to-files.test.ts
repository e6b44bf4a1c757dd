import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, type Logger } from '@pmatch/platform';
import { createFileMailer } from '../src/outbound/mailer';
import { DispatcherHarness, OWNER_EMAIL } from './support/harness';

/** Without SMTP_URL (development), every owner e-mail is written to its own .eml file under MAIL_DIR. */

let harness: DispatcherHarness;

beforeAll(async () => {
  harness = await DispatcherHarness.start({ clock: new ManualClock('2026-11-22T03:04:05.678Z') });
});

afterAll(async () => {
  await harness?.stop();
});

const emlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.eml'))
    .sort();

test('when SMTP_URL is not set and an owner e-mail is due, then it is written as one .eml file under MAIL_DIR and counts as sent', async () => {
  const orgId = await harness.createOrganisation();
  const endpoint = await harness.createEndpoint(orgId, 'https://shop.example/hooks');
  const email = await harness.prisma.webhookEmail.create({
    data: {
      id: 'eml_tofile0000000000000001',
      endpointId: endpoint.id,
      kind: 'endpoint_disabled',
      recipient: OWNER_EMAIL,
      subject: 'Webhook endpoint switched off: https://shop.example/hooks',
      body: 'It failed for 72 hours.\nSwitch it on again in the console.',
      nextAttemptAt: harness.clock.now(),
      createdAt: harness.clock.now(),
    },
  });

  await harness.dispatcher.sendDueEmails();

  const files = emlFiles(harness.mailDir);
  expect(files).toEqual([expect.stringMatching(/^2026-11-22T03-04-05\.678Z-[0-9a-f]{8}\.eml$/)]);
  const eml = readFileSync(join(harness.mailDir, files[0]!), 'utf8');
  expect(eml).toMatch(/^From: Payment matching <no-reply@localhost>$/m);
  expect(eml).toMatch(new RegExp(`^To: ${OWNER_EMAIL}$`, 'm'));
  expect(eml).toMatch(/^Subject: Webhook endpoint switched off: https:\/\/shop\.example\/hooks$/m);
  expect(eml).toMatch(/^Date: Sun, 22 Nov 2026 03:04:05 \+0000$/m);
  expect(eml).toContain('It failed for 72 hours.\nSwitch it on again in the console.');
  expect(await harness.prisma.webhookEmail.findUniqueOrThrow({ where: { id: email.id } })).toMatchObject({
    sentAt: harness.clock.now(),
    nextAttemptAt: null,
  });
});

test('when the file sink writes two e-mails, then each gets its own file and a log line naming it', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'mail-sink-')), 'not', 'made', 'yet');
  const logged: { file: string; message: string }[] = [];
  const logger = { info: (fields: { file: string }, message: string) => logged.push({ file: fields.file, message }) } as unknown as Logger;
  const mailer = await createFileMailer({ dir, from: 'Shop <shop@example.com>', clock: new ManualClock('2026-11-22T00:00:00Z'), logger });
  try {
    await mailer.send({ to: 'a@example.com', subject: 'first', text: 'one' });
    await mailer.send({ to: 'b@example.com', subject: 'second', text: 'two' });

    const files = emlFiles(dir);
    expect(files).toHaveLength(2);
    expect(logged.map((line) => line.file).sort()).toEqual(files.map((name) => join(dir, name)));
    expect(logged.map((line) => line.message)).toEqual(['SMTP_URL is not set: e-mail written to a file', 'SMTP_URL is not set: e-mail written to a file']);
    const texts = files.map((name) => readFileSync(join(dir, name), 'utf8'));
    expect(texts.filter((text) => /^To: a@example\.com$/m.test(text) && text.includes('one'))).toHaveLength(1);
    expect(texts.filter((text) => /^To: b@example\.com$/m.test(text) && text.includes('two'))).toHaveLength(1);
  } finally {
    mailer.close();
    rmSync(join(dir, '..', '..', '..'), { recursive: true, force: true });
  }
});
