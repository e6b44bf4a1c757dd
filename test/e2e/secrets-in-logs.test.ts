import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { SERVICES, TestSystem, api } from '@pmatch/testkit';

/** Nothing secret is ever written to a log: API keys, webhook and adapter secrets, account numbers. */

let system: TestSystem;

beforeAll(async () => {
  system = await TestSystem.start({ LOG_LEVEL: 'trace', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' });
});

afterAll(async () => {
  await system?.stop();
});

describe('logs', () => {
  test('when keys, secrets and account numbers pass through every service, then no log line contains them', async () => {
    const { client, orgId, testKey } = await system.createMerchant();
    const accountNumber = '8765432';
    const account = await system.ops('bank-account', 'add', '--org', orgId, '--mode', 'live', '--bank-code', '0001', '--branch-code', '001', '--account-number', accountNumber, '--holder-name', 'ﾛｸﾞ');
    const liveKey = String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'l')).key);
    const adapterSecret = String((await system.ops('adapter', 'create', '--name', 'bank')).secret);
    const endpoint = await client.request('POST', '/v1/webhook-endpoints', { url: 'https://127.0.0.1:9/hook' });
    const webhookSecret = String(endpoint.body.secret);
    await client.request('POST', `/v1/webhook-endpoints/${endpoint.body.id}/rotate-secret`);
    await client.createOrder({ amount: 5100 });
    await client.deposit(5100);
    await api(system.apiUrl, 'GET', '/v1/orders', { key: `${testKey.slice(0, -1)}X` });
    const body = JSON.stringify({ bank_account_id: account.id, bank_reference: randomUUID(), direction: 'deposit', amount: 5200, counterparty: 'ﾛｸﾞ', occurred_at: new Date().toISOString() });
    const at = new Date();
    const notified = await api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
      rawBody: body,
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_log', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(adapterSecret).sign('msg_log', at, body) },
    });
    expect(notified.status).toBe(202);
    expect((await api(system.apiUrl, 'GET', '/v1/events', { key: liveKey })).status).toBe(200);

    const logs = SERVICES.map((s) => system.logs(s)).join('\n');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [testKey, liveKey, adapterSecret, webhookSecret, webhookSecret.slice('whsec_'.length), accountNumber]) {
      expect(logs).not.toContain(secret);
    }
  });
});
