import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { type MerchantClient, REPO_ROOT, TestSystem } from '@pmatch/testkit';

/**
 * Orders with source shop (order.created "through … a shop platform"; "the shop platform
 * reports payment" → paid_outside; PATCH or cancel → 409 order_not_open), played by the ops CLI.
 */

const HOUR = 60 * 60 * 1000;
let system: TestSystem;
let merchant: MerchantClient;
let orgId: string;

beforeAll(async () => {
  system = await TestSystem.start();
  ({ client: merchant, orgId } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

/** Runs the ops CLI with the system's environment and returns how it ended, success or not. */
function runOps(...args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'packages', 'ops', 'dist', 'main.js'), ...args],
      { env: { ...process.env, ...system.env } },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') {
          reject(error);
          return;
        }
        resolve({ exitCode: error === null ? 0 : Number(error.code), stdout, stderr });
      },
    );
  });
}

let sequence = 0;
async function createShopOrder(amount: number): Promise<any> {
  sequence += 1;
  return system.ops(
    'shop-order',
    'create',
    '--org',
    orgId,
    '--mode',
    'test',
    '--amount',
    String(amount),
    '--payer-name',
    'ヤマダ タロウ',
    '--external-id',
    `shop-${sequence}`,
    '--item-name',
    'お米 5kg',
    '--metadata',
    '{"platform":"example-shop"}',
  );
}

async function eventsOf(orderId: string): Promise<any[]> {
  return (await merchant.events()).filter((event) => event.data.object.id === orderId);
}

test('when an operator creates a shop order, then the API shows it with source shop and order.created', async () => {
  const order = await createShopOrder(3300);

  const res = await merchant.request('GET', `/v1/orders/${order.id}`);

  expect(res.status).toBe(200);
  expect(res.body).toEqual(order);
  expect(res.body).toMatchObject({
    object: 'order',
    livemode: false,
    status: 'open',
    amount: 3300,
    source: 'shop',
    payment: null,
    metadata: { platform: 'example-shop' },
    payment_url: expect.stringMatching(new RegExp(`^${system.apiUrl}/pay/`)),
  });
  const events = await eventsOf(order.id);
  expect(events.map((event) => event.type)).toEqual(['order.created']);
  expect(events[0].data.object).toEqual(order);
});

test('when a shop order is edited, canceled or marked paid through the API, then 409 order_not_open and nothing changes', async () => {
  const order = await createShopOrder(3301);

  const patched = await merchant.request('PATCH', `/v1/orders/${order.id}`, { amount: 9999 });
  const canceled = await merchant.request('POST', `/v1/orders/${order.id}/cancel`);
  const markedPaid = await merchant.request('POST', `/v1/orders/${order.id}/mark-paid`, {});

  expectError(patched, 409, 'order_not_open');
  expectError(canceled, 409, 'order_not_open');
  expectError(markedPaid, 409, 'order_not_open');
  expect(await merchant.order(order.id)).toEqual(order);
  expect((await eventsOf(order.id)).map((event) => event.type)).toEqual(['order.created']);
});

test('when the shop platform reports payment, then the order is paid_outside with no transaction, decided by shop, and order.paid follows order.created', async () => {
  const order = await createShopOrder(3302);

  const paid: any = await system.ops('shop-order', 'pay', '--order', order.id);

  expect(paid).toMatchObject({
    id: order.id,
    status: 'paid_outside',
    source: 'shop',
    closed_at: expect.any(String),
    payment: {
      transaction_id: null,
      amount: 3302,
      counterparty: 'ヤマダ タロウ',
      decided_by: 'shop',
      trigger: 'shop',
      reason: 'manual',
    },
  });
  expect(paid.payment.occurred_at).toBe(paid.payment.matched_at);
  expect(await merchant.order(order.id)).toEqual(paid);
  const events = await eventsOf(order.id);
  expect(events.map((event) => event.type)).toEqual(['order.created', 'order.paid']);
  expect(events[1].data.object).toEqual(paid);
});

test('when the payment is reported with paid_at, then the payment carries that time', async () => {
  const order = await createShopOrder(3303);
  const paidAt = new Date(system.now().getTime() - HOUR).toISOString();

  const paid: any = await system.ops('shop-order', 'pay', '--order', order.id, '--paid-at', paidAt);

  expect(paid.status).toBe('paid_outside');
  expect(paid.payment.occurred_at).toBe(paidAt);
  expect(Date.parse(paid.payment.matched_at)).toBeGreaterThan(Date.parse(paidAt));
});

test('when a paid shop order is reported paid again, then ops exits 4 (conflict) with the matcher refusal order_not_open and nothing changes', async () => {
  const order = await createShopOrder(3304);
  const paid = await system.ops('shop-order', 'pay', '--order', order.id);
  const eventsBefore = await eventsOf(order.id);

  const again = await runOps('shop-order', 'pay', '--order', order.id);

  expect({ exitCode: again.exitCode, stdout: again.stdout }).toEqual({ exitCode: 4, stdout: '' });
  expect(JSON.parse(again.stderr)).toEqual({ error: { code: 'order_not_open', message: expect.stringMatching(/^the matcher refused \(order_not_open\): /) } });
  expect(await merchant.order(order.id)).toEqual(paid);
  expect(await eventsOf(order.id)).toEqual(eventsBefore);
});

test('when an order made through the API is reported paid by the shop command, then ops refuses it (exit 2) and the order stays open', async () => {
  const order = await merchant.createOrder({ amount: 3305 });

  const run = await runOps('shop-order', 'pay', '--order', order.id);

  expect(run.exitCode).toBe(2);
  expect(JSON.parse(run.stderr).error.message).toContain('did not come from a shop platform');
  expect((await merchant.order(order.id)).status).toBe('open');
});
