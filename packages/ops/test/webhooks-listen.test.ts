import { Webhook } from 'standardwebhooks';
import { TestSystem, freePort, waitFor, type MerchantClient } from '@pmatch/testkit';
import { LocalReceiver, ListenProcess } from './listen-process';
import { expectFailure, runOps } from './run-ops';

/**
 * `ops webhooks listen` against the real services: it follows a key's events through the API and
 * posts each to a plain-http server on loopback, signed with the secret it printed. Nothing about
 * webhook endpoints is registered or needed.
 */

let system: TestSystem;
let receiver: LocalReceiver;
let merchant: { testKey: string; client: MerchantClient };
const listeners: ListenProcess[] = [];

beforeAll(async () => {
  system = await TestSystem.start();
  receiver = await LocalReceiver.start();
  merchant = await system.createMerchant({ name: 'ローカル商店' });
});

afterAll(async () => {
  await Promise.all(listeners.map((listener) => listener.stop()));
  await receiver?.close();
  await system?.stop();
});

let pathCounter = 0;
const freshPath = () => `/webhooks/${++pathCounter}`;

/** `ops webhooks listen` for a key (the merchant's unless given), forwarding to `path`, polling every 100 ms. */
function listen(path: string, extra: string[] = [], key = merchant.testKey): ListenProcess {
  const listener = ListenProcess.start(['--forward-to', receiver.url(path), '--poll-interval', '100', ...extra], {
    PAYMENTS_API_URL: system.apiUrl,
    PAYMENTS_API_KEY: key,
  });
  listeners.push(listener);
  return listener;
}

let amount = 3000;
/** An order and a deposit under its name: order.created, transaction.deposited, order.paid. */
async function orderPaid(client = merchant.client): Promise<{ orderId: string; eventIds: string[] }> {
  amount += 1;
  const before = (await client.events()).length;
  const order = await client.createOrder({ amount, payer_name: 'ﾀﾅｶ ﾊﾅｺ' });
  const deposit = await client.deposit(amount, 'ﾀﾅｶ ﾊﾅｺ');
  expect(deposit.status).toBe('confirmed');
  const events = await waitFor(async () => {
    const all = await client.events();
    return all.length >= before + 3 ? all.slice(before) : undefined;
  });
  return { orderId: order.id, eventIds: events.map((e) => e.id) };
}

test('when events are recorded after it starts, then each is posted to the local URL in recorded order, signed with the secret it printed, and nothing older', async () => {
  const older = await orderPaid();
  const path = freshPath();
  const listener = listen(path);
  const start = await listener.started();
  expect(start).toMatchObject({
    object: 'webhook_listener',
    secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
    forward_to: receiver.url(path),
    events: ['*'],
    starting_after: older.eventIds.at(-1),
  });

  const paid = await orderPaid();

  const received = await waitFor(() => (receiver.requestsTo(path).length >= 3 ? receiver.requestsTo(path) : undefined));
  const listed = (await merchant.client.events()).filter((e) => paid.eventIds.includes(e.id));
  expect(received.map((r) => r.headers['webhook-id'])).toEqual(paid.eventIds);
  received.forEach((request, i) => {
    const verified = new Webhook(start.secret).verify(request.body, request.headers as Record<string, string>);
    expect(verified).toEqual(listed[i]);
    expect(request.headers['content-type']).toBe('application/json');
  });
  expect(listed.map((e) => e.type)).toEqual(['order.created', 'transaction.deposited', 'order.paid']);
  expect(() =>
    new Webhook(start.secret).verify(received[2]!.body.replace(paid.orderId, 'ord_forged0000000000000000'), received[2]!.headers as never),
  ).toThrow();
  await waitFor(() => (listener.linesOf('forwarded_event').length === 3 ? true : undefined));
  expect(listener.linesOf('forwarded_event')).toEqual(
    paid.eventIds.map((id, i) => ({
      object: 'forwarded_event',
      event_id: id,
      type: listed[i]!.type,
      status_code: 204,
      duration_ms: expect.any(Number),
      error: null,
    })),
  );

  const stopped = await listener.stop();

  expect(stopped).toEqual({ exitCode: 0, last: { object: 'webhook_listener', stopped: true, forwarded: 3, failed: 0, last_event_id: paid.eventIds[2] } });
  expect(receiver.requests.some((r) => older.eventIds.includes(String(r.headers['webhook-id'])))).toBe(false);
});

test('when it is run again for the same key, then it signs with the same secret, another key gets another, and --secret chooses one', async () => {
  const other = await system.createMerchant({ name: '別の商店' });
  const secretOf = async (extra: string[] = [], key?: string) => {
    const listener = listen(freshPath(), extra, key);
    const { secret } = await listener.started();
    await listener.stop();
    return secret;
  };

  const [first, second, otherKey, chosen] = [
    await secretOf(),
    await secretOf(),
    await secretOf([], other.testKey),
    await secretOf(['--secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']),
  ];

  expect(second).toBe(first);
  expect(otherKey).not.toBe(first);
  expect(chosen).toBe('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  expect(first).not.toContain(merchant.testKey.slice('svc_test_'.length, 20));
});

test('when --events and --starting-after are given, then it forwards only those types, from the events after that one', async () => {
  const earlier = await orderPaid();
  await orderPaid();
  const path = freshPath();
  const listener = listen(path, ['--events', 'order.paid', '--starting-after', earlier.eventIds[0]!]);
  await listener.started();

  const later = await orderPaid();

  const received = await waitFor(() => (receiver.requestsTo(path).length >= 3 ? receiver.requestsTo(path) : undefined));
  const paidEvents = (await merchant.client.events('order.paid')).map((e) => e.id);
  expect(received.map((r) => r.headers['webhook-id'])).toEqual(paidEvents.slice(-3));
  expect(received.at(-1)!.headers['webhook-id']).toBe(later.eventIds[2]);
});

test('when the local server answers an error or is not there, then the event is reported failed, not retried, and the next one is forwarded', async () => {
  const path = freshPath();
  receiver.answer(path, 500);
  const listener = listen(path, ['--events', 'order.created']);
  await listener.started();

  const failing = await orderPaid();
  await waitFor(() => (listener.linesOf('forwarded_event').length === 1 ? true : undefined));
  receiver.answer(path, 200);
  const answered = await orderPaid();

  await waitFor(() => (listener.linesOf('forwarded_event').length === 2 ? true : undefined));
  expect(listener.linesOf('forwarded_event')).toEqual([
    expect.objectContaining({ event_id: failing.eventIds[0], status_code: 500, error: 'HTTP 500' }),
    expect.objectContaining({ event_id: answered.eventIds[0], status_code: 200, error: null }),
  ]);
  expect(receiver.requestsTo(path)).toHaveLength(2);

  const nobody = ListenProcess.start(['--forward-to', `http://127.0.0.1:${await freePort()}/webhooks`, '--poll-interval', '100', '--events', 'order.created'], {
    PAYMENTS_API_URL: system.apiUrl,
    PAYMENTS_API_KEY: merchant.testKey,
  });
  listeners.push(nobody);
  await nobody.started();
  const unheard = await orderPaid();
  await waitFor(() => (nobody.linesOf('forwarded_event').length === 1 ? true : undefined));
  expect(nobody.linesOf('forwarded_event')[0]).toMatchObject({ event_id: unheard.eventIds[0], status_code: null, error: 'ECONNREFUSED' });
  expect(await nobody.stop()).toMatchObject({ exitCode: 0, last: { forwarded: 0, failed: 1 } });
});

test('when the key is missing, malformed or unknown, then it exits 2 with the reason before printing anything', async () => {
  const args = ['webhooks', 'listen', '--forward-to', 'http://localhost:4000/webhooks', '--api-url', system.apiUrl];

  const missing = expectFailure(await runOps(system.env.DATABASE_URL!, args, { PAYMENTS_API_KEY: '' }), 2);
  const malformed = expectFailure(await runOps(system.env.DATABASE_URL!, [...args, '--api-key', 'sk_live_x']), 2);
  const unknown = expectFailure(await runOps(system.env.DATABASE_URL!, [...args, '--api-key', `svc_test_${'0'.repeat(32)}`]), 2);

  expect(missing).toMatchObject({ code: 'usage_error', message: expect.stringContaining('PAYMENTS_API_KEY') });
  expect(malformed).toMatchObject({ code: 'usage_error', message: expect.stringContaining('--api-key') });
  expect(unknown).toMatchObject({ code: 'invalid_api_key', param: 'api-key' });
});

test('when the API is not there, then it exits 1 naming the address before printing anything', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;

  const run = await runOps(system.env.DATABASE_URL!, ['webhooks', 'listen', '--forward-to', 'http://localhost:4000/webhooks', '--api-url', url], {
    PAYMENTS_API_KEY: merchant.testKey,
  });

  expect(expectFailure(run, 1)).toMatchObject({ code: 'service_unavailable', param: 'api-url', message: expect.stringContaining(url) });
});
