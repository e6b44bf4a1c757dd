import { Webhook } from 'standardwebhooks';
import { DeletedWebhookEndpoint, ResendAccepted, WebhookDeliveryAttempt, WebhookEndpoint, WebhookEndpointSecret, listOf } from '@pmatch/contracts';
import { MerchantClient, TestSystem, api, waitFor } from '@pmatch/testkit';
import { HttpsReceiver, type ReceivedRequest } from '../../services/webhook-dispatcher/test/support/receiver';
import { TestCa } from '../../services/webhook-dispatcher/test/support/tls';

/**
 * Webhook endpoints through the API and deliveries by the real dispatcher process, to a real
 * HTTPS receiver on loopback whose certificate a test CA issued (WEBHOOK_CA_FILE), with loopback
 * allowed for that receiver only (WEBHOOK_ALLOWED_CIDRS).
 */

let system: TestSystem;
let ca: TestCa;
let receiver: HttpsReceiver;
let merchant: MerchantClient;
let orgId: string;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  system = await TestSystem.start({
    WEBHOOK_CA_FILE: ca.certFile,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    // Short enough that the kill test's redelivery comes soon, long enough that its hanging attempt
    // is still in flight when the process is killed; the lease is the least the dispatcher allows.
    DELIVERY_TIMEOUT_MS: '3000',
    DELIVERY_LEASE_MS: '5000',
    DELIVERY_POLL_INTERVAL_MS: '100',
  });
  ({ client: merchant, orgId } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
  await receiver?.close();
  ca?.remove();
});

let pathCounter = 0;
const freshPath = () => `/webhooks/${++pathCounter}`;

function expectError(res: { status: number; body: any }, status: number, code: string, param?: string) {
  expect({ status: res.status, code: res.body?.error?.code, ...(param ? { param: res.body?.error?.param } : {}) }).toEqual({
    status,
    code,
    ...(param ? { param } : {}),
  });
}

async function createEndpoint(client: MerchantClient, body: Record<string, unknown>) {
  const res = await client.request('POST', '/v1/webhook-endpoints', body);
  if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function deleteAllEndpoints(client: MerchantClient) {
  for (const endpoint of (await client.request('GET', '/v1/webhook-endpoints')).body.data) {
    await client.request('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
  }
}

async function arrivals(path: string, count: number): Promise<ReceivedRequest[]> {
  return waitFor(() => (receiver.requestsTo(path).length >= count ? receiver.requestsTo(path) : undefined), {
    what: `${count} request(s) at ${path}`,
  });
}

describe('endpoint management', () => {
  afterEach(() => deleteAllEndpoints(merchant));

  test('when an endpoint is created, then its secret is shown once, kept sealed, viewable again, and the endpoint can be read, changed and deleted', async () => {
    const url = receiver.url(freshPath());

    const created = await merchant.request('POST', '/v1/webhook-endpoints', { url });

    expect(created.status).toBe(201);
    expect(() => WebhookEndpoint.parse(created.body)).not.toThrow();
    expect(created.body).toMatchObject({ object: 'webhook_endpoint', url, enabled_events: ['*'], enabled: true, livemode: false, disabled_reason: null });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.body.id;
    const [stored] = await system.sql('SELECT secret_encrypted FROM webhook_endpoints WHERE id = $1', [id]);
    expect(stored!.secret_encrypted).not.toContain(created.body.secret.slice(6));
    const secret = await merchant.request('GET', `/v1/webhook-endpoints/${id}/secret`);
    expect(WebhookEndpointSecret.parse(secret.body)).toEqual({
      object: 'webhook_endpoint_secret',
      secret: created.body.secret,
      previous_secret_expires_at: null,
    });
    const read = await merchant.request('GET', `/v1/webhook-endpoints/${id}`);
    expect(read.body).toEqual(Object.fromEntries(Object.entries(created.body).filter(([k]) => k !== 'secret')));

    const patched = await merchant.request('PATCH', `/v1/webhook-endpoints/${id}`, { enabled_events: ['order.paid', 'transaction.held'] });

    expect(patched.status).toBe(200);
    expect(patched.body.enabled_events).toEqual(['order.paid', 'transaction.held']);
    const list = await merchant.request('GET', '/v1/webhook-endpoints');
    expect(() => listOf(WebhookEndpoint).parse(list.body)).not.toThrow();
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
    const deleted = await merchant.request('DELETE', `/v1/webhook-endpoints/${id}`);
    expect(DeletedWebhookEndpoint.parse(deleted.body)).toEqual({ id, object: 'webhook_endpoint', deleted: true });
    expectError(await merchant.request('GET', `/v1/webhook-endpoints/${id}`), 404, 'resource_missing');
  });

  test('when URLs are not https, name this machine, or are private or link-local addresses, then 400 url_not_allowed', async () => {
    const refused = [
      'http://example.com/hooks',
      'https://localhost/hooks',
      `https://localhost:${receiver.port}/hooks`,
      'https://10.0.0.1/hooks',
      'https://192.168.0.10/hooks',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.64.0.1/hooks',
      'https://[::1]/hooks',
      'https://[fd12::1]/hooks',
      'https://[::ffff:10.0.0.1]/hooks',
    ];

    for (const url of refused) {
      expectError(await merchant.request('POST', '/v1/webhook-endpoints', { url }), 400, 'url_not_allowed', 'url');
    }
    expectError(await merchant.request('POST', '/v1/webhook-endpoints', { url: 'not a url' }), 400, 'parameter_invalid', 'url');
    expectError(
      await merchant.request('POST', '/v1/webhook-endpoints', { url: receiver.url('/x'), enabled_events: ['order.paid', '*'] }),
      400,
      'parameter_invalid',
    );
    const endpoint = await createEndpoint(merchant, { url: receiver.url(freshPath()) });
    expectError(await merchant.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { url: 'https://10.0.0.1/' }), 400, 'url_not_allowed', 'url');
    expect((await merchant.request('GET', '/v1/webhook-endpoints')).body.data).toHaveLength(1);
  });

  test('when a mode has 5 endpoints, then a 6th is refused with 400 endpoint_limit_reached, while the other mode is separate', async () => {
    const created = [];
    for (let i = 0; i < 5; i += 1) created.push(await createEndpoint(merchant, { url: receiver.url(freshPath()) }));

    expectError(await merchant.request('POST', '/v1/webhook-endpoints', { url: receiver.url(freshPath()) }), 400, 'endpoint_limit_reached');
    const liveKey = String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'live')).key);
    const live = new MerchantClient(system.apiUrl, liveKey);
    const liveEndpoint = await createEndpoint(live, { url: receiver.url(freshPath()) });
    expect(liveEndpoint.livemode).toBe(true);
    expectError(await live.request('GET', `/v1/webhook-endpoints/${created[0].id}`), 404, 'resource_missing');
    expectError(await merchant.request('GET', `/v1/webhook-endpoints/${liveEndpoint.id}`), 404, 'resource_missing');
    expect((await live.request('GET', '/v1/webhook-endpoints')).body.data.map((e: { id: string }) => e.id)).toEqual([liveEndpoint.id]);
    await merchant.request('DELETE', `/v1/webhook-endpoints/${created[0].id}`);
    expect((await merchant.request('POST', '/v1/webhook-endpoints', { url: receiver.url(freshPath()) })).status).toBe(201);
    await deleteAllEndpoints(live);
  });

  test('when six creates race, then exactly five succeed', async () => {
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map(() => merchant.request('POST', '/v1/webhook-endpoints', { url: receiver.url(freshPath()) })));

    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 400]);
  });

  test('when a sealed secret is copied from an adapter row or another endpoint into an endpoint, then reading its secret is a clean 409 secret_unavailable, and restored it is readable again', async () => {
    const endpoint = await createEndpoint(merchant, { url: receiver.url(freshPath()) });
    const other = await createEndpoint(merchant, { url: receiver.url(freshPath()) });
    const account = await system.addLiveBankAccount(orgId, { branch: '002', number: '5550001', holder: 'ﾃｽﾄｼﾖｳﾃﾝ' });
    const adapter = await system.ops('adapter', 'create', '--name', 'copied', '--bank-account', String(account.id));
    const sealedOf = async (table: string, id: string) =>
      String((await system.sql(`SELECT secret_encrypted FROM ${table} WHERE id = $1`, [id]))[0]!.secret_encrypted);
    const own = await sealedOf('webhook_endpoints', endpoint.id);
    const setSealed = (sealed: string) => system.sql('UPDATE webhook_endpoints SET secret_encrypted = $1 WHERE id = $2', [sealed, endpoint.id]);

    await setSealed(await sealedOf('bank_adapters', String(adapter.id)));
    const fromAdapter = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`);
    await setSealed(await sealedOf('webhook_endpoints', other.id));
    const fromOtherEndpoint = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`);
    await setSealed(own);
    const restored = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`);

    for (const refused of [fromAdapter, fromOtherEndpoint]) {
      expectError(refused, 409, 'secret_unavailable');
      expect(refused.body.error.type).toBe('conflict_error');
      expect(JSON.stringify(refused.body)).not.toMatch(/whsec_|v[12]\.|stack|Error:/);
    }
    expect(restored.status).toBe(200);
    expect(restored.body.secret).toBe(endpoint.secret);
  });

  test('when a read-only key is used, then it can list endpoints but neither change them nor read a secret', async () => {
    const endpoint = await createEndpoint(merchant, { url: receiver.url(freshPath()) });
    const readOnly = String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'test', '--name', 'ro', '--permission', 'read_only')).key);
    const reader = new MerchantClient(system.apiUrl, readOnly);

    expect((await reader.request('GET', '/v1/webhook-endpoints')).status).toBe(200);
    expectError(await reader.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`), 403, 'insufficient_scope');
    expectError(await reader.request('POST', '/v1/webhook-endpoints', { url: receiver.url('/x') }), 403, 'insufficient_scope');
    expectError(await reader.request('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`), 403, 'insufficient_scope');
  });

  test("when a live key limited to one bank account is used, then it may neither see nor manage webhook endpoints, which receive every account's events", async () => {
    const account = await system.addLiveBankAccount(orgId, { number: '7000001', holder: 'ｳｪﾌﾞﾌｯｸ' });
    const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'live')).key));
    const scoped = new MerchantClient(
      system.apiUrl,
      String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'one account', '--bank-account', String(account.id))).key),
    );
    const endpoint = await createEndpoint(live, { url: receiver.url(freshPath()) });

    const attempts = [
      await scoped.request('POST', '/v1/webhook-endpoints', { url: receiver.url(freshPath()) }),
      await scoped.request('GET', '/v1/webhook-endpoints'),
      await scoped.request('GET', `/v1/webhook-endpoints/${endpoint.id}`),
      await scoped.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { enabled: false }),
      await scoped.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`),
      await scoped.request('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`),
      await scoped.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`),
      await scoped.request('DELETE', `/v1/webhook-endpoints/${endpoint.id}`),
    ];

    for (const res of attempts) {
      expectError(res, 403, 'insufficient_scope');
      expect(res.body.error.message).toMatch(/limited to one bank account.*every bank account of the organisation/);
    }
    expect((await live.request('GET', '/v1/webhook-endpoints')).body.data).toMatchObject([{ id: endpoint.id, enabled: true }]);
    expect((await live.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`)).body.secret).toBe(endpoint.secret);
    await deleteAllEndpoints(live);
  });
});

describe('deliveries', () => {
  afterEach(() => deleteAllEndpoints(merchant));

  test('when an order is paid, then order.paid arrives signed, verifies with standardwebhooks, and the delivery log finds it by event id', async () => {
    const path = freshPath();
    const endpoint = await createEndpoint(merchant, { url: receiver.url(path), enabled_events: ['order.paid'] });
    const order = await merchant.createOrder({ amount: 15400 });

    await merchant.deposit(15400);

    const [request] = await arrivals(path, 1);
    const event = new Webhook(endpoint.secret).verify(request!.body, request!.headers as Record<string, string>) as any;
    expect(event).toMatchObject({ object: 'event', type: 'order.paid', livemode: false, data: { object: { id: order.id, status: 'paid' } } });
    expect(request!.headers['webhook-id']).toBe(event.id);
    const [listed] = await merchant.events('order.paid');
    expect(JSON.parse(request!.body)).toEqual(listed);
    const log = await waitFor(async () => {
      const res = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?event_id=${event.id}`);
      return res.body.data?.length === 1 ? res.body : undefined;
    });
    expect(() => listOf(WebhookDeliveryAttempt).parse(log)).not.toThrow();
    expect(log.data[0]).toMatchObject({
      event_id: event.id,
      event_type: 'order.paid',
      attempt: 1,
      status_code: 200,
      error: null,
      delivery_status: 'succeeded',
    });
    // Whole milliseconds of one attempt on loopback, well inside the 10 s timeout.
    expect(Number.isInteger(log.data[0].duration_ms)).toBe(true);
    expect(log.data[0].duration_ms).toBeLessThan(10_000);
    const other = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?event_id=evt_${'0'.repeat(24)}`);
    expect(other.body.data).toEqual([]);

    const resend = await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/resend`, { event_id: event.id });

    expect(resend.status).toBe(202);
    expect(ResendAccepted.parse(resend.body)).toEqual({ object: 'webhook_resend', endpoint_id: endpoint.id, event_id: event.id });
    const again = await arrivals(path, 2);
    expect(again.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
    const attempts = await waitFor(async () => {
      const res = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?event_id=${event.id}`);
      return res.body.data.length === 2 ? res.body.data : undefined;
    });
    expect(attempts.map((a: { attempt: number }) => a.attempt)).toEqual([2, 1]);
    const firstPage = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=1`);
    expect(firstPage.body).toMatchObject({ has_more: true, data: [{ attempt: 2 }] });
    const nextPage = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=1&starting_after=${firstPage.body.data[0].id}`);
    expect(nextPage.body).toMatchObject({ has_more: false, data: [{ attempt: 1 }] });
  });

  test('when the secret is rotated, then the next delivery carries two signatures, each valid with its own secret', async () => {
    const path = freshPath();
    const endpoint = await createEndpoint(merchant, { url: receiver.url(path) });

    const rotated = await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);

    expect(rotated.status).toBe(200);
    expect(() => WebhookEndpointSecret.parse(rotated.body)).not.toThrow();
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    const overlapEnds = new Date(rotated.body.previous_secret_expires_at).getTime() - system.now().getTime();
    expect(overlapEnds).toBeGreaterThan(23.9 * 3600_000);
    expect(overlapEnds).toBeLessThanOrEqual(24 * 3600_000);
    expect((await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`)).body.secret).toBe(rotated.body.secret);
    const test = await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`);
    const [request] = await arrivals(path, 1);
    const headers = request!.headers as Record<string, string>;
    const signatures = headers['webhook-signature']!.split(' ');
    expect(signatures).toHaveLength(2);
    expect(new Webhook(rotated.body.secret).verify(request!.body, { ...headers, 'webhook-signature': signatures[0]! })).toEqual(test.body);
    expect(new Webhook(endpoint.secret).verify(request!.body, { ...headers, 'webhook-signature': signatures[1]! })).toEqual(test.body);
    expect(() => new Webhook(endpoint.secret).verify(request!.body, { ...headers, 'webhook-signature': signatures[0]! })).toThrow();
  });

  test('when a test event is sent, then webhook.test with an evt_test_ id arrives and appears neither in the delivery log nor in the events', async () => {
    const path = freshPath();
    const endpoint = await createEndpoint(merchant, { url: receiver.url(path) });

    const sent = await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`);

    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ object: 'event', type: 'webhook.test', livemode: false });
    expect(sent.body.id).toMatch(/^evt_test_[0-9A-Za-z]{24}$/);
    const [request] = await arrivals(path, 1);
    expect(new Webhook(endpoint.secret).verify(request!.body, request!.headers as Record<string, string>)).toEqual(sent.body);
    expect((await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`)).body.data).toEqual([]);
    expect((await merchant.events()).map((e) => e.id)).not.toContain(sent.body.id);
    expectError(
      await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/resend`, { event_id: sent.body.id }),
      404,
      'resource_missing',
      'event_id',
    );
  });

  test('when an endpoint is switched off by hand, then events are not sent to it, resend is refused, and after switching on a missed event is resent', async () => {
    const path = freshPath();
    const endpoint = await createEndpoint(merchant, { url: receiver.url(path) });
    const off = await merchant.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { enabled: false });
    expect(off.body).toMatchObject({ enabled: false, disabled_reason: 'manual' });

    const order = await merchant.createOrder({ amount: 15500 });
    const [created] = (await merchant.events('order.created')).filter((e) => e.data.object.id === order.id);
    await system.processed('webhook-dispatcher.events', created.id);

    expect(receiver.requestsTo(path)).toEqual([]);
    expectError(await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/resend`, { event_id: created.id }), 400, 'parameter_invalid');
    const on = await merchant.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { enabled: true });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    expect((await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/resend`, { event_id: created.id })).status).toBe(202);
    const [request] = await arrivals(path, 1);
    expect(request!.headers['webhook-id']).toBe(created.id);
  });

  test('when the dispatcher is killed while a delivery is in flight, then after restart it is delivered with the same webhook-id', async () => {
    const path = freshPath();
    receiver.answer(path, 'hang');
    const endpoint = await createEndpoint(merchant, { url: receiver.url(path), enabled_events: ['order.created'] });
    await merchant.createOrder({ amount: 15600 });
    const [first] = await arrivals(path, 1);

    await system.kill('webhook-dispatcher');
    receiver.answer(path, { status: 200 });
    await system.startService('webhook-dispatcher');

    const requests = await arrivals(path, 2);
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual([first!.headers['webhook-id'], first!.headers['webhook-id']]);
    const log = await waitFor(async () => {
      const res = await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`);
      return res.body.data.length > 0 ? res.body.data : undefined;
    });
    expect(log).toMatchObject([{ attempt: 1, status_code: 200, delivery_status: 'succeeded' }]);
  });
});

test('when the dispatcher serves /metrics, then delivery metrics are there', async () => {
  const res = await api(system.adminUrl('webhook-dispatcher'), 'GET', '/metrics');

  expect(res.status).toBe(200);
  expect(res.body).toContain('webhook_delivery_attempts_total');
  expect(res.body).toContain('webhook_delivery_attempt_duration_seconds');
});

/** These move the services' clock forward by days, so they run after every test that verifies signatures against the wall clock. */
describe("on the services' clock", () => {
  const HOUR = 3600_000;
  afterEach(() => deleteAllEndpoints(merchant));

  /** Which of `secrets` verify each entry of a request's signature header, checked by the official library at the services' time. */
  function signers(request: ReceivedRequest, secrets: string[]): number[][] {
    const headers = request.headers as Record<string, string>;
    const wallClock = jest.spyOn(Date, 'now').mockReturnValue(system.now().getTime());
    try {
      return headers['webhook-signature']!.split(' ').map((entry) =>
        secrets.flatMap((secret, i) => {
          try {
            new Webhook(secret).verify(request.body, { ...headers, 'webhook-signature': entry });
            return [i];
          } catch {
            return [];
          }
        }),
      );
    } finally {
      wallClock.mockRestore();
    }
  }

  test('when the secret is rotated twice within 24 hours, then deliveries carry three signatures, each valid with its own secret, after 24 hours only the newer ones, and a fifth overlapping secret is refused', async () => {
    const path = freshPath();
    const endpoint = await createEndpoint(merchant, { url: receiver.url(path) });
    const rotate = async () => (await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`)).body;
    const firstRotation = await rotate();
    system.advanceClock(6 * HOUR);
    const secondRotation = await rotate();
    const secrets = [endpoint.secret, firstRotation.secret, secondRotation.secret];
    let sent = 0;
    const sendTest = async () => {
      expect((await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`)).status).toBe(202);
      sent += 1;
      return (await arrivals(path, sent))[sent - 1]!;
    };

    expect(signers(await sendTest(), secrets)).toEqual([[2], [1], [0]]);
    expect((await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`)).body).toMatchObject({
      secret: secondRotation.secret,
      previous_secret_expires_at: secondRotation.previous_secret_expires_at,
    });

    system.advanceClock(18 * HOUR + 60_000);

    expect(signers(await sendTest(), secrets)).toEqual([[2], [1]]);
    expect((await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`)).body.previous_secret_expires_at).toBe(
      secondRotation.previous_secret_expires_at,
    );
    // The replaced secret of the second rotation still signs; three more make four overlapping, the next would cut one short.
    for (let i = 0; i < 3; i += 1) expect((await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`)).status).toBe(200);
    const refused = await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expectError(refused, 429, 'rate_limited');
    expect(refused.body.error.message).toContain(`the next rotation is possible at ${secondRotation.previous_secret_expires_at}`);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(5.9 * 3600);
    expect(retryAfter).toBeLessThanOrEqual(6 * 3600);
  });

  test('when an endpoint has only failed for 72 hours, then it switches itself off; switched on again by PATCH, the events it missed are resent one by one from the log', async () => {
    const path = freshPath();
    receiver.answer(path, { status: 500 });
    const endpoint = await createEndpoint(merchant, { url: receiver.url(path), enabled_events: ['order.created'] });
    const createdEvent = async (amount: number) => {
      const order = await merchant.createOrder({ amount });
      return (await merchant.events('order.created')).find((e) => e.data.object.id === order.id)!.id as string;
    };
    const log = async (eventId: string) => (await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?event_id=${eventId}`)).body.data;
    const endpointNow = async () => (await merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}`)).body;
    /** Moves the services' clock to each next due attempt and waits for it, until `done` or nothing is pending. */
    const runSchedule = async (done: () => Promise<boolean>) => {
      for (let step = 0; step < 30; step += 1) {
        if (await done()) return;
        const [next] = await system.sql(
          `SELECT id, next_attempt_at, attempt_count FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' ORDER BY next_attempt_at LIMIT 1`,
          [endpoint.id],
        );
        if (next === undefined) return;
        const wait = new Date(next.next_attempt_at).getTime() - system.now().getTime();
        if (wait > 0) system.advanceClock(wait);
        await waitFor(
          async () => {
            const [row] = await system.sql('SELECT attempt_count, status FROM webhook_deliveries WHERE id = $1', [next.id]);
            return row!.attempt_count > next.attempt_count || row!.status !== 'pending' ? true : undefined;
          },
          { what: `attempt ${next.attempt_count + 1} of ${next.id}` },
        );
      }
      throw new Error('the schedule did not end');
    };
    const early = await createdEvent(16100);
    const [firstFailure] = await waitFor(async () => ((await log(early)).length === 1 ? log(early) : undefined));
    await runSchedule(async () => false);
    expect((await log(early)).map((a: { attempt: number }) => a.attempt)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    system.advanceClock(new Date(firstFailure.attempted_at).getTime() + 60 * HOUR - system.now().getTime());
    const late = await createdEvent(16200);
    await waitFor(async () => ((await log(late)).length === 1 ? true : undefined));

    await runSchedule(async () => (await endpointNow()).enabled === false);

    expect(await endpointNow()).toMatchObject({ enabled: false, disabled_reason: 'failing', failing_since: firstFailure.attempted_at });
    expect((await log(late)).map((a: { delivery_status: string }) => a.delivery_status)).toEqual(Array(7).fill('skipped'));
    const whileOff = await createdEvent(16300);
    await system.processed('webhook-dispatcher.events', whileOff);
    expect(await log(whileOff)).toEqual([]);
    const requestsBefore = receiver.requestsTo(path).length;
    receiver.answer(path, { status: 204 });

    const on = await merchant.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { enabled: true });

    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    for (const [i, eventId] of [early, late, whileOff].entries()) {
      expect((await merchant.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/resend`, { event_id: eventId })).status).toBe(202);
      const [arrived] = (await arrivals(path, requestsBefore + i + 1)).slice(-1);
      expect(arrived!.headers['webhook-id']).toBe(eventId);
      const [latest] = await waitFor(async () => ((await log(eventId))[0]?.status_code === 204 ? log(eventId) : undefined));
      expect(latest).toMatchObject({ status_code: 204, error: null, delivery_status: 'succeeded' });
    }
    expect(receiver.requestsTo(path)).toHaveLength(requestsBefore + 3);
    expect(await endpointNow()).toMatchObject({ enabled: true, failing_since: null });
  });
});
