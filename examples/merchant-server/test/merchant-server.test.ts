import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:https';
import type { Server } from 'node:net';
import { Agent } from 'undici';
import { PaymentsClient, WebhookVerifier, type WebhookEndpoint } from '@pmatch/client';
import { TestSystem, freePort, waitFor } from '@pmatch/testkit';
import { ListenProcess } from '../../../packages/ops/test/listen-process';
import { TestCa } from '../../../services/webhook-dispatcher/test/support/tls';
import { createShopApp } from '../src/app';
import { Shop, type Purchase } from '../src/shop';

/**
 * The example shop against the real services: a buyer checks out and lands on the payment page, a
 * test deposit under the name as the bank prints it pays the order, and the real dispatcher's
 * webhooks reach the shop over HTTPS (a test CA's certificate; loopback allowed for webhooks),
 * repeats and late arrivals included; or, as on a developer's laptop, `ops webhooks listen`
 * forwards them to the shop over plain http.
 */

let system: TestSystem;
let ca: TestCa;
let client: PaymentsClient;
let testKey: string;
let agent: Agent;
const servers: Server[] = [];

interface RunningShop {
  url: string;
  shop: Shop;
  endpoint: WebhookEndpoint;
}

/** The example shop on its own HTTPS port, with a webhook endpoint of its own. */
async function startShop(enabledEvents?: ['order.paid']): Promise<RunningShop> {
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const endpoint = await client.webhookEndpoints.create({ url: `${url}/webhooks`, ...(enabledEvents ? { enabled_events: enabledEvents } : {}) });
  const shop = new Shop();
  const app = createShopApp({ client, verifier: new WebhookVerifier(endpoint.secret), shop, item: { name: 'お米 5kg', amount: 5000 } });
  const server = createServer(ca.issueServerCertificate(), app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url, shop, endpoint };
}

let main: RunningShop;

beforeAll(async () => {
  ca = TestCa.create();
  agent = new Agent({ connect: { ca: readFileSync(ca.certFile) } });
  system = await TestSystem.start({ WEBHOOK_CA_FILE: ca.certFile, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', DELIVERY_POLL_INTERVAL_MS: '100' });
  ({ testKey } = await system.createMerchant({ name: 'お米の店' }));
  client = new PaymentsClient({ apiKey: testKey, baseUrl: system.apiUrl });
  main = await startShop();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await agent?.close();
  await system?.stop();
  ca?.remove();
});

const shopFetch = (path: string, init: RequestInit = {}, at = main) =>
  fetch(`${at.url}${path}`, { ...init, redirect: 'manual', dispatcher: agent } as RequestInit);

/** A buyer fills in the form; answers the purchase the shop recorded and where the buyer was sent. */
async function checkOut(payerName: string, at = main): Promise<{ purchase: Purchase; location: string }> {
  const res = await shopFetch('/checkout', { method: 'POST', body: new URLSearchParams({ payer_name: payerName }) }, at);
  expect(res.status).toBe(303);
  const location = res.headers.get('location')!;
  const newest = (await client.orders.list({ limit: 1 })).data[0]!;
  return { purchase: at.shop.purchaseOfOrder(newest.id)!, location };
}

async function purchaseAsServed(id: string): Promise<Purchase> {
  const res = await shopFetch(`/purchases/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Purchase;
}

async function eventOf(type: 'order.created' | 'order.paid', orderId: string) {
  return waitFor(
    async () => {
      for await (const event of client.events.listAll({ type })) if ('id' in event.data.object && event.data.object.id === orderId) return event;
      return undefined;
    },
    { what: `${type} of ${orderId}` },
  );
}

test('when a buyer checks out, then an order is registered under the name as the bank prints it and the buyer is sent to its payment page', async () => {
  const { purchase, location } = await checkOut('ヤマダ タロウ');

  expect(location).toBe(purchase.paymentUrl);
  expect(location.startsWith(`${system.apiUrl}/pay/`)).toBe(true);
  const page = await fetch(location);
  expect(page.status).toBe(200);
  const text = await page.text();
  expect(text).toContain('5,000');
  expect(text).toContain('ﾔﾏﾀﾞ ﾀﾛｳ');
  const order = await client.orders.retrieve(purchase.orderId);
  expect(order).toMatchObject({ external_id: purchase.id, amount: 5000, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ', payer_name_bank_form: 'ﾔﾏﾀﾞ ﾀﾛｳ', status: 'open' });
  expect(await purchaseAsServed(purchase.id)).toMatchObject({ status: 'open', transferAs: 'ﾔﾏﾀﾞ ﾀﾛｳ', paidAt: null });
});

test('when the buyer transfers under the name as the bank prints it, then the deposit is confirmed with the default settings, and the order.paid webhook pays the purchase', async () => {
  const { purchase } = await checkOut('ヤマダ ジロウ');
  expect(await client.settings.retrieve()).toMatchObject({ matching_rules: [] });

  const deposit = await client.testDeposits.create({ amount: 5000, counterparty: purchase.transferAs! });

  expect(purchase.transferAs).toBe('ﾔﾏﾀﾞ ｼﾞﾛｳ');
  expect(deposit).toMatchObject({ status: 'confirmed', order_id: purchase.orderId, decision: { reason: 'exact' } });
  const paid = await waitFor(() => (main.shop.purchase(purchase.id)?.status === 'paid' ? main.shop.purchase(purchase.id) : undefined), {
    what: 'the purchase to be paid',
  });
  expect(paid!.paidAt).not.toBeNull();
  expect(main.shop.wasHandled((await eventOf('order.paid', purchase.orderId)).id)).toBe(true);
});

test('when a buyer gives a name no bank prints, then the shop asks for katakana and registers nothing', async () => {
  const before = (await client.orders.list({ limit: 1 })).data[0]?.id;

  const res = await shopFetch('/checkout', { method: 'POST', body: new URLSearchParams({ payer_name: '山田次郎' }) });

  expect(res.status).toBe(400);
  expect(await res.text()).toContain('katakana');
  expect((await client.orders.list({ limit: 1 })).data[0]?.id).toBe(before);
});

test('when an event is delivered again, then the shop answers it and handles it once', async () => {
  const { purchase } = await checkOut('タナカ ジロウ');
  await client.testDeposits.create({ amount: 5000, counterparty: purchase.transferAs! });
  const paidEvent = await eventOf('order.paid', purchase.orderId);
  await waitFor(() => (main.shop.wasHandled(paidEvent.id) ? true : undefined), { what: 'the first delivery' });
  const repeatsBefore = main.shop.repeatsIgnored;
  const paidAt = main.shop.purchase(purchase.id)!.paidAt;

  await client.webhookEndpoints.resend(main.endpoint.id, paidEvent.id);

  await waitFor(() => (main.shop.repeatsIgnored > repeatsBefore ? true : undefined), { what: 'the repeat to be ignored' });
  const attempts = await client.webhookEndpoints.listDeliveryAttempts(main.endpoint.id, { event_id: paidEvent.id });
  expect(attempts.data.map((a) => a.status_code)).toEqual([204, 204]);
  expect(main.shop.purchase(purchase.id)).toMatchObject({ status: 'paid', paidAt });
});

test('when an older event arrives after a newer one, then the shop keeps the order as it is now', async () => {
  // This shop's endpoint hears only order.paid at first, so order.created reaches it only later,
  // resent once the order is paid: the late arrival a retried delivery makes.
  const late = await startShop(['order.paid']);
  const { purchase } = await checkOut('スズキ イチロウ', late);
  await client.testDeposits.create({ amount: 5000, counterparty: purchase.transferAs! });
  await waitFor(() => (late.shop.purchase(purchase.id)?.status === 'paid' ? true : undefined), { what: 'the purchase to be paid' });
  const created = await eventOf('order.created', purchase.orderId);
  expect(created.type === 'order.created' && created.data.object.status).toBe('open');

  await client.webhookEndpoints.update(late.endpoint.id, { enabled_events: ['*'] });
  await client.webhookEndpoints.resend(late.endpoint.id, created.id);

  await waitFor(() => (late.shop.wasHandled(created.id) ? true : undefined), { what: 'the late order.created to be handled' });
  expect(late.shop.purchase(purchase.id)).toMatchObject({ status: 'paid' });
  expect(late.shop.purchase(purchase.id)!.paidAt).not.toBeNull();
});

test('when a webhook is not signed with the endpoint secret, then the shop refuses it and changes nothing', async () => {
  const { purchase } = await checkOut('ニセ モノ');
  const forged = JSON.stringify({ id: 'evt_forged00000000000000', object: 'event', type: 'order.paid', data: { object: { id: purchase.orderId } } });

  const res = await shopFetch('/webhooks', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'evt_forged00000000000000',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,Zm9yZ2Vk',
    },
    body: forged,
  });

  expect(res.status).toBe(400);
  expect(main.shop.purchase(purchase.id)).toMatchObject({ status: 'open', paidAt: null });
  expect(main.shop.wasHandled('evt_forged00000000000000')).toBe(false);
});

test('when the shop runs on plain http on a laptop, then ops webhooks listen forwards its webhooks, signed with the secret it printed, and the purchase is paid', async () => {
  const port = await freePort();
  const listener = ListenProcess.start(['--forward-to', `http://127.0.0.1:${port}/webhooks`, '--events', 'order.paid', '--poll-interval', '100'], {
    PAYMENTS_API_URL: system.apiUrl,
    PAYMENTS_API_KEY: testKey,
  });
  try {
    const { secret } = await listener.started();
    const shop = new Shop();
    const server = createHttpServer(createShopApp({ client, verifier: new WebhookVerifier(secret), shop, item: { name: 'お米 5kg', amount: 5000 } }));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const checkout = await fetch(`http://127.0.0.1:${port}/checkout`, {
      method: 'POST',
      body: new URLSearchParams({ payer_name: 'きむら さくら' }),
      redirect: 'manual',
    });
    expect(checkout.status).toBe(303);
    const newest = (await client.orders.list({ limit: 1 })).data[0]!;
    const purchase = shop.purchaseOfOrder(newest.id)!;

    await client.testDeposits.create({ amount: 5000, counterparty: purchase.transferAs! });

    await waitFor(() => (shop.purchase(purchase.id)?.status === 'paid' ? true : undefined), { what: 'the purchase to be paid through the forwarded webhook' });
    expect(purchase.transferAs).toBe('ｷﾑﾗ ｻｸﾗ');
    // The listener writes its line once the shop has answered, which may be just after the purchase is paid.
    const forwarded = () => listener.linesOf('forwarded_event').find((line) => line.type === 'order.paid');
    await waitFor(() => forwarded(), { what: "the listener's line for the forwarded order.paid" });
    expect(forwarded()).toMatchObject({ type: 'order.paid', status_code: 204, error: null });
  } finally {
    await listener.stop();
  }
});
