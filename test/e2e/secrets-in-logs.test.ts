import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { DATABASE_ROLE, MerchantClient, REPO_ROOT, SERVICES, TestSystem, api, databaseUrlAs, waitFor } from '@pmatch/testkit';
import { HttpsReceiver } from '../../services/webhook-dispatcher/test/support/receiver';
import { TestCa } from '../../services/webhook-dispatcher/test/support/tls';

/**
 * Nothing secret is ever written to a log: API keys (a near miss too), webhook and adapter secrets
 * (the rotated one too), payment page tokens, the secrets key, and full bank account numbers.
 * Every secret here really passes through the services, with every log level on: the test first
 * proves the traffic carried it (the payment page shows the account number, the delivered webhook
 * carries it), then that no log line holds it.
 */

const execFileAsync = promisify(execFile);
let system: TestSystem;
let ca: TestCa;
let receiver: HttpsReceiver;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  system = await TestSystem.start({ LOG_LEVEL: 'trace', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_CA_FILE: ca.certFile });
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await receiver?.close();
  ca?.remove();
});

/** The ops CLI as an operator runs it: its whole output, whether it succeeded or not. */
async function opsOutput(...args: string[]): Promise<string> {
  const env = { ...process.env, ...system.env, DATABASE_URL: databaseUrlAs(system.env.DATABASE_URL!, DATABASE_ROLE.ops) };
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [join(REPO_ROOT, 'packages', 'ops', 'dist', 'main.js'), ...args], { env });
    return stdout + stderr;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return `${failed.stdout ?? ''}${failed.stderr ?? ''}`;
  }
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;
const whsecBody = (secret: string) => secret.slice('whsec_'.length);

describe('logs', () => {
  test('when keys, secrets, tokens and an account number pass through every service, then no log line contains them, and the CLI shows the number at most once', async () => {
    const { client, orgId, testKey } = await system.createMerchant();
    const accountNumber = '8765432';
    const added = await opsOutput(
      'bank-account',
      'add',
      '--org',
      orgId,
      '--mode',
      'live',
      '--bank-code',
      '0001',
      '--branch-code',
      '001',
      '--account-number',
      accountNumber,
      '--holder-name',
      'ﾛｸﾞ',
    );
    const accountId = String(JSON.parse(added).id);
    // A near miss at the CLI: eight digits are refused, and the refusal may echo them to the operator once.
    const refused = await opsOutput(
      'bank-account',
      'add',
      '--org',
      orgId,
      '--mode',
      'live',
      '--bank-code',
      '0001',
      '--branch-code',
      '001',
      '--account-number',
      `${accountNumber}1`,
      '--holder-name',
      'ﾛｸﾞ',
    );
    const liveKey = String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'l')).key);
    const live = new MerchantClient(system.apiUrl, liveKey);
    const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', accountId);
    const adapterSecret = String(adapter.secret);

    const endpoint = await live.request('POST', '/v1/webhook-endpoints', { url: receiver.url('/hook') });
    expect(endpoint.status).toBe(201);
    const webhookSecret = String(endpoint.body.secret);
    const rotated = await live.request('POST', `/v1/webhook-endpoints/${endpoint.body.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const rotatedSecret = String(rotated.body.secret);

    // The account number through orders-api (the payment page shows it), the matcher (which pays
    // the order and records order.paid with its metadata), bank-ingest (which reads the account for
    // the notification) and the dispatcher (which delivers order.paid).
    const order = await live.createOrder({ amount: 5200, payer_name: 'ﾛｸﾞ ﾀﾛｳ', bank_account_id: accountId, metadata: { refund_account: accountNumber } });
    const token = String(order.payment_url).split('/pay/')[1]!;
    const page = await fetch(order.payment_url);
    expect(await page.text()).toContain(accountNumber);
    expect((await fetch(`${system.apiUrl}/pay/${token}x`)).status).toBe(404);
    // A payment link's token through its page, its form and the order it makes.
    const link = await live.request('POST', '/v1/payment-links', { amount: 5300, item_name: 'log', bank_account_id: accountId });
    const linkToken = String(link.body.url).split('/link/')[1]!;
    expect((await fetch(link.body.url)).status).toBe(200);
    const preview = await fetch(link.body.url, { method: 'POST', body: new URLSearchParams({ step: 'preview', payer_name: 'ﾛｸﾞ ﾊﾅｺ' }) }).then((r) => r.text());
    const attempt = /name="attempt" value="([0-9A-Za-z]+)"/.exec(preview)![1]!;
    const ordered = await fetch(link.body.url, {
      method: 'POST',
      body: new URLSearchParams({ step: 'create', payer_name: 'ﾛｸﾞ ﾊﾅｺ', attempt }),
      redirect: 'manual',
    });
    expect(ordered.status).toBe(303);
    expect((await fetch(`${system.apiUrl}/link/${linkToken}x`)).status).toBe(404);

    const body = JSON.stringify({
      bank_account_id: accountId,
      bank_reference: randomUUID(),
      direction: 'deposit',
      amount: 5200,
      counterparty: 'ﾛｸﾞ ﾀﾛｳ',
      occurred_at: new Date().toISOString(),
    });
    const at = new Date();
    const notified = await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
      rawBody: body,
      headers: {
        'content-type': 'application/json',
        'bank-adapter-id': String(adapter.id),
        'webhook-id': 'msg_log',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(adapterSecret).sign('msg_log', at, body),
      },
    });
    expect(notified.status).toBe(202);
    // A notification naming the account by its number instead of its id, and one badly signed.
    const byNumber = JSON.stringify({ ...JSON.parse(body), bank_account_id: accountNumber, bank_reference: randomUUID() });
    expect(
      (
        await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
          rawBody: byNumber,
          headers: {
            'content-type': 'application/json',
            'bank-adapter-id': String(adapter.id),
            'webhook-id': 'msg_log2',
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': new Webhook(adapterSecret).sign('msg_log2', at, byNumber),
          },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
          rawBody: body,
          headers: {
            'content-type': 'application/json',
            'bank-adapter-id': String(adapter.id),
            'webhook-id': 'msg_log3',
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': new Webhook(webhookSecret).sign('msg_log3', at, body),
          },
        })
      ).status,
    ).toBe(401);

    const paid = await waitFor(
      () => receiver.requests.find((r) => r.headers['webhook-id'] !== undefined && r.body.includes('"order.paid"') && r.body.includes(accountNumber)),
      { what: 'order.paid, with the account number, delivered', timeoutMs: 30_000 },
    );
    new Webhook(rotatedSecret).verify(paid.body, paid.headers as Record<string, string>);

    // Test mode and bad keys through orders-api.
    await client.createOrder({ amount: 5100 });
    await client.deposit(5100);
    const nearMiss = `${testKey.slice(0, -1)}${testKey.endsWith('X') ? 'Y' : 'X'}`;
    expect((await api(system.apiUrl, 'GET', '/v1/orders', { key: nearMiss })).status).toBe(401);
    expect((await api(system.apiUrl, 'GET', `/v1/orders?external_id=${encodeURIComponent(liveKey)}`, { key: testKey })).status).toBe(200);
    expect((await api(system.apiUrl, 'GET', '/v1/events', { key: liveKey })).status).toBe(200);

    // The CLI may show the operator the number once (ops prints the object it made).
    expect(occurrences(added, accountNumber)).toBeLessThanOrEqual(1);
    expect(occurrences(refused, accountNumber)).toBeLessThanOrEqual(1);

    const logs = SERVICES.map((s) => `${system.exitedLogs(s)}\n${system.logs(s)}`).join('\n');
    // Every service logged at trace level: the check reads real output, not an empty string.
    for (const s of SERVICES) expect(system.logs(s)).toContain(`"service":"${s}"`);
    const secrets = {
      'test key': testKey,
      'live key': liveKey,
      'near-miss key': nearMiss,
      "near-miss key's random part": nearMiss.slice('svc_test_'.length),
      'adapter secret': adapterSecret,
      "adapter secret's key": whsecBody(adapterSecret),
      'webhook secret': webhookSecret,
      "webhook secret's key": whsecBody(webhookSecret),
      'rotated webhook secret': rotatedSecret,
      "rotated secret's key": whsecBody(rotatedSecret),
      'payment page token': token,
      'payment link token': linkToken,
      'account number': accountNumber,
      SECRETS_KEY: system.env.SECRETS_KEY!,
    };
    const leaked = Object.entries(secrets)
      .filter(([, secret]) => logs.includes(secret))
      .map(([name]) => name);
    expect(leaked).toEqual([]);
  });

  test('when a log line carries credentials in messages, errors, URLs or row fields, then the logger writes none of them', () => {
    // The logger itself, apart from what the services happen to log today: what a careless line would leak.
    const key = `svc_live_${'A1b2'.repeat(8)}`;
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const token = 'T0k3nT0k3nT0k3nT0k3nT0k3nT0k3nT0';
    const script = `
      const { createLogger } = require(${JSON.stringify(join(REPO_ROOT, 'packages', 'platform', 'dist', 'logger.js'))});
      const logger = createLogger('leak-check', 'trace');
      logger.info({ url: '/pay/${token}?x=1', account: { accountNumber: '7654321', secretEncrypted: 'v1.sealed' }, keyHash: 'abc' }, 'request for ${key}');
      logger.error({ err: new Error('bad signature with ${secret} for /pay/${token} and /link/${token}') }, 'failed');
      logger.warn('key %s near miss', '${key.slice(0, -1)}Z');
    `;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(out.split('\n').filter(Boolean)).toHaveLength(3);
    for (const leak of [key, key.slice(0, -1), secret, whsecBody(secret), token, '7654321', 'v1.sealed']) expect(out).not.toContain(leak);
    expect(out).toContain('/pay/[token]');
    expect(out).toContain('/link/[token]');
  });
});
