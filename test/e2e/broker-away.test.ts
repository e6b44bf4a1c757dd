import { randomUUID } from 'node:crypto';
import { CuttableProxy, RABBITMQ_URL, TestSystem, adapterCredentials, waitFor } from '@pmatch/testkit';
import { HttpsReceiver } from '../../services/webhook-dispatcher/test/support/receiver';
import { TestCa } from '../../services/webhook-dispatcher/test/support/tls';
import { liveAccount, notify } from './support/bank';

/**
 * RabbitMQ away: every process of this system reaches the broker through a proxy the test cuts
 * (connections ended, new ones refused), as a restarting or unreachable broker does. orders-api and
 * bank-ingest write what they send to the outbox, so they keep taking orders and notifications and
 * stay ready; what they wrote is published once the broker is back.
 */

let proxy: CuttableProxy;
let ca: TestCa;
let receiver: HttpsReceiver;
let system: TestSystem;

beforeAll(async () => {
  proxy = await CuttableProxy.start(RABBITMQ_URL);
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  system = await TestSystem.start({
    RABBITMQ_URL: proxy.url(RABBITMQ_URL),
    WEBHOOK_CA_FILE: ca.certFile,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    DELIVERY_POLL_INTERVAL_MS: '100',
  });
});

afterAll(async () => {
  await system?.stop();
  await proxy?.close();
  await receiver?.close();
  ca?.remove();
});

async function readyz(service: 'orders-api' | 'bank-ingest'): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${system.adminUrl(service)}/readyz`);
  return { status: res.status, body: await res.json() };
}

async function brokerConnected(service: 'orders-api' | 'bank-ingest'): Promise<number | undefined> {
  const line = /^pmatch_broker_connected (\d+)$/m.exec(await system.metrics(service));
  return line === null ? undefined : Number(line[1]);
}

test('when RabbitMQ refuses connections, then orders-api and bank-ingest stay ready, take an order (201) and a notification (202), and once it is back the order is delivered to its webhook endpoint and the deposit decided', async () => {
  const { orgId, client } = await system.createMerchant();
  const hookPath = `/away/${randomUUID()}`;
  const endpoint = await client.request('POST', '/v1/webhook-endpoints', { url: receiver.url(hookPath), enabled_events: ['order.created'] });
  expect(endpoint.status).toBe(201);
  const accountId = await liveAccount(system, orgId, { number: '7300001' });
  const adapter = adapterCredentials(await system.ops('adapter', 'create', '--name', 'bank-away', '--bank-account', accountId));

  proxy.cut();
  try {
    await waitFor(async () => ((await brokerConnected('orders-api')) === 0 && (await brokerConnected('bank-ingest')) === 0 ? true : undefined), {
      what: 'orders-api and bank-ingest to notice the broker is away',
    });

    const order = await client.request('POST', '/v1/orders', {
      amount: 7300,
      payer_name: 'ヤマダ タロウ',
      item_name: 'お米 5kg',
      external_id: `away-${randomUUID()}`,
    });
    expect(order.status).toBe(201);
    const notification = await notify(system, adapter, {
      bank_account_id: accountId,
      bank_reference: `ref-${randomUUID()}`,
      direction: 'deposit',
      amount: 9100,
      counterparty: 'ｽｽﾞｷ ﾊﾅｺ',
      occurred_at: new Date().toISOString(),
    });
    expect(notification.status).toBe(202);
    expect(await readyz('orders-api')).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok' } } });
    expect(await readyz('bank-ingest')).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok' } } });
    const waiting = await system.sql<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
    expect(waiting[0]!.n).toBeGreaterThan(0);
    expect(receiver.requestsTo(hookPath)).toEqual([]);

    proxy.resume();
    await waitFor(async () => ((await brokerConnected('orders-api')) === 1 && (await brokerConnected('bank-ingest')) === 1 ? true : undefined), {
      timeoutMs: 30_000,
      what: 'orders-api and bank-ingest to be connected again',
    });
    const [created] = await client.events('order.created');
    await waitFor(() => (receiver.requestsTo(hookPath).length > 0 ? true : undefined), { timeoutMs: 30_000, what: 'the order.created webhook' });
    expect(receiver.requestsTo(hookPath).map((r) => (JSON.parse(r.body) as { id: string }).id)).toEqual([created.id]);
    await waitFor(
      async () => {
        const [row] = await system.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [notification.body.transaction_id]);
        return row?.status === 'pending' ? undefined : row;
      },
      { timeoutMs: 30_000, what: 'the deposit taken while the broker was away to be decided' },
    );
    await waitFor(
      async () => ((await system.sql<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL'))[0]!.n === 0 ? true : undefined),
      {
        what: 'every outbox row to be published',
      },
    );
  } finally {
    proxy.resume();
  }
});
