import { ApiError, PaymentsClient, WebhookVerificationError, WebhookVerifier, type Fetch } from '@pmatch/client';
import { TestSystem, waitFor } from '@pmatch/testkit';
import { HttpsReceiver } from '../../services/webhook-dispatcher/test/support/receiver';
import { TestCa } from '../../services/webhook-dispatcher/test/support/tls';

/**
 * @pmatch/client against the real services, with a rate limit small enough that an eager caller
 * meets 429s (5 requests a second, bursts of 5), and webhooks delivered by the real dispatcher to
 * an HTTPS receiver on loopback.
 */

let system: TestSystem;
let ca: TestCa;
let receiver: HttpsReceiver;
let key: string;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  system = await TestSystem.start({
    RATE_LIMIT_PER_SECOND: '5',
    RATE_LIMIT_BURST: '5',
    WEBHOOK_CA_FILE: ca.certFile,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
  });
  ({ testKey: key } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
  await receiver?.close();
  ca?.remove();
});

/** A client whose every answer is kept, and whose every wait is recorded before it is waited. */
function observedClient() {
  const answers: { method: string; path: string; status: number; headers: Headers }[] = [];
  const waits: number[] = [];
  const fetch: Fetch = async (request) => {
    const response = await globalThis.fetch(request);
    answers.push({
      method: request.method,
      path: new URL(request.url).pathname + new URL(request.url).search,
      status: response.status,
      headers: response.headers,
    });
    return response;
  };
  const client = new PaymentsClient({
    apiKey: key,
    baseUrl: system.apiUrl,
    fetch,
    sleep: (ms) => {
      waits.push(ms);
      return new Promise((resolve) => setTimeout(resolve, ms));
    },
  });
  return { client, answers, waits };
}

let sequence = 0;
const newOrder = () => ({ amount: 7000 + ++sequence, payer_name: 'スズキ ハナコ', external_id: `client-${sequence}`, item_name: '茶葉 200g' });

test('when an order is created twice with one idempotency key, then one order exists and the second answer is the first, replayed', async () => {
  const { client, answers } = observedClient();
  const body = newOrder();

  const first = await client.orders.create(body, { idempotencyKey: `key-${body.external_id}` });
  const second = await client.orders.create(body, { idempotencyKey: `key-${body.external_id}` });

  expect(second).toEqual(first);
  const creates = answers.filter((a) => a.method === 'POST' && a.status < 300);
  expect(creates.map((a) => [a.status, a.headers.get('idempotent-replayed')])).toEqual([
    [201, null],
    [201, 'true'],
  ]);
  const listed = await client.orders.list({ external_id: body.external_id });
  expect(listed.data.map((o) => o.id)).toEqual([first.id]);
  const reused = await client.orders.create({ ...body, amount: body.amount + 1 }, { idempotencyKey: `key-${body.external_id}` }).catch((e: unknown) => e);
  expect(reused).toBeInstanceOf(ApiError);
  expect(reused).toMatchObject({ status: 400, code: 'idempotency_key_reused', param: 'Idempotency-Key' });
});

test('when more requests come at once than the rate limit allows, then each 429 is waited out for its Retry-After and every request succeeds', async () => {
  const { client, answers, waits } = observedClient();
  const order = await client.orders.create(newOrder());

  const reads = await Promise.all(Array.from({ length: 12 }, () => client.orders.retrieve(order.id)));

  expect(reads.map((o) => o.id)).toEqual(Array(12).fill(order.id));
  const limited = answers.filter((a) => a.status === 429);
  expect(limited.length).toBeGreaterThan(0);
  expect([...waits].sort()).toEqual(limited.map((a) => Number(a.headers.get('retry-after')) * 1000).sort());
});

test('when events are listed across pages, then every event comes once, in recorded order, one request per page', async () => {
  const { client, answers } = observedClient();
  for (let i = 0; i < 5; i += 1) await client.orders.create(newOrder());
  const everything = await client.events.list({ limit: 100, type: 'order.created' });
  expect(everything.has_more).toBe(false);

  const paged = [];
  for await (const event of client.events.listAll({ limit: 2, type: 'order.created' })) paged.push(event);

  expect(paged.map((e) => e.id)).toEqual(everything.data.map((e) => e.id));
  expect(paged.length).toBeGreaterThanOrEqual(5);
  const pages = answers.filter((a) => a.status === 200 && a.path.startsWith('/v1/events?limit=2'));
  expect(pages).toHaveLength(Math.ceil(paged.length / 2));
  expect(pages.slice(1).map((p) => new URL(p.path, 'http://x').searchParams.get('starting_after'))).toEqual(
    paged.filter((_e, i) => i % 2 === 1 && i < paged.length - 1).map((e) => e.id),
  );
});

test('when a real webhook is delivered, then the verifier accepts it with the endpoint secret and refuses it altered', async () => {
  const { client } = observedClient();
  const endpoint = await client.webhookEndpoints.create({ url: receiver.url('/client-hooks'), enabled_events: ['order.paid'] });
  const order = await client.orders.create(newOrder());

  const deposit = await client.testDeposits.create({ amount: order.amount, counterparty: order.payer_name });
  expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id });
  const delivery = await waitFor(() => receiver.requestsTo('/client-hooks')[0], { what: 'the order.paid delivery' });

  const event = new WebhookVerifier(endpoint.secret!).verify(delivery.body, delivery.headers);
  expect(event.type).toBe('order.paid');
  expect(event.type === 'order.paid' && event.data.object.id).toBe(order.id);
  expect(() => new WebhookVerifier(endpoint.secret!).verify(delivery.body.replace(order.id, 'ord_forged0000000000000000'), delivery.headers)).toThrow(
    WebhookVerificationError,
  );
  const { secret: other } = await client.webhookEndpoints.rotateSecret(endpoint.id);
  expect(() => new WebhookVerifier(other).verify(delivery.body, delivery.headers)).toThrow(WebhookVerificationError);
});
