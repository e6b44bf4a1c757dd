import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, ConnectionError, PaymentsClient, retryAfterMs, type ErrorCodeOf } from '../src';

/**
 * The client's own behaviour against a scripted HTTP server on loopback: what it sends, how it
 * retries and waits, how it pages, what it throws. The end-to-end tests (test/e2e/client.test.ts)
 * show the same against the real services.
 */

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

interface Scripted {
  url: string;
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

async function serve(handler: Handler): Promise<Scripted> {
  const requests: Scripted['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_00000000000000000000000000000001', ...headers }).end(JSON.stringify(body));

const errorBody = (type: string, code: string, message = 'refused') => ({ error: { type, code, message, request_id: 'req_00000000000000000000000000000001' } });
const order = { id: 'ord_AAAAAAAAAAAAAAAAAAAAAAAA', object: 'order', status: 'open' };

let server: Scripted | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function clientOf(url: string, waits: number[] = [], maxRetries = 3) {
  return new PaymentsClient({
    apiKey: 'svc_test_0123456789abcdefghijklmnopqrstuv',
    baseUrl: `${url}/`,
    maxRetries,
    sleep: async (ms) => void waits.push(ms),
  });
}

describe('requests', () => {
  test('when an order is created, then the key goes as a bearer token with a fresh Idempotency-Key, or the one given', async () => {
    server = await serve((_req, _body, res) => json(res, 201, order));
    const client = clientOf(server.url);

    await client.orders.create({ amount: 5000, payer_name: 'ヤマダ タロウ', external_id: 'a', item_name: 'x' });
    await client.orders.create({ amount: 5000, payer_name: 'ヤマダ タロウ', external_id: 'b', item_name: 'x' });
    await client.orders.create({ amount: 5000, payer_name: 'ヤマダ タロウ', external_id: 'c', item_name: 'x' }, { idempotencyKey: 'mine-1' });

    const [first, second, third] = server.requests;
    expect(first).toMatchObject({ method: 'POST', url: '/v1/orders', headers: { authorization: 'Bearer svc_test_0123456789abcdefghijklmnopqrstuv' } });
    expect(JSON.parse(first!.body)).toEqual({ amount: 5000, payer_name: 'ヤマダ タロウ', external_id: 'a', item_name: 'x' });
    expect(first!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second!.headers['idempotency-key']).not.toBe(first!.headers['idempotency-key']);
    expect(third!.headers['idempotency-key']).toBe('mine-1');
  });

  test('when the API refuses, then an ApiError carries its status, type, code, param and request id', async () => {
    server = await serve((_req, _body, res) =>
      json(res, 409, { error: { type: 'conflict_error', code: 'external_id_conflict', message: 'taken', param: 'external_id', request_id: 'req_1' } }),
    );

    const error = await clientOf(server.url)
      .orders.create({ amount: 1, payer_name: 'a', external_id: 'a', item_name: 'a' })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 409,
      type: 'conflict_error',
      code: 'external_id_conflict',
      param: 'external_id',
      requestId: 'req_1',
      message: 'taken',
    });
  });
});

describe('retries', () => {
  test('when the API answers 429 with Retry-After, then the client waits that long and sends the request again', async () => {
    let refusals = 2;
    server = await serve((_req, _body, res) =>
      refusals-- > 0 ? json(res, 429, errorBody('rate_limit_error', 'rate_limited'), { 'retry-after': '2' }) : json(res, 200, order),
    );
    const waits: number[] = [];

    const answer = await clientOf(server.url, waits).orders.retrieve(order.id);

    expect(answer).toEqual(order);
    expect(waits).toEqual([2000, 2000]);
    expect(server.requests).toHaveLength(3);
  });

  test('when a POST without an Idempotency-Key meets a server error, then it is not sent again; a GET is, with growing backoff', async () => {
    server = await serve((_req, _body, res) => json(res, 500, errorBody('api_error', 'internal_error')));
    const waits: number[] = [];
    const client = clientOf(server.url, waits);

    const cancel = await client.orders.cancel(order.id).catch((e: unknown) => e);
    expect(cancel).toMatchObject({ status: 500, code: 'internal_error' });
    expect(server.requests).toHaveLength(1);

    const read = await client.orders.retrieve(order.id).catch((e: unknown) => e);
    expect(read).toMatchObject({ status: 500 });
    expect(server.requests).toHaveLength(1 + 4);
    expect(waits).toHaveLength(3);
    expect(waits[0]).toBeGreaterThanOrEqual(250);
    expect(waits[2]).toBeGreaterThanOrEqual(1000);
  });

  test('when an order create meets a server error, then it is sent again with the same Idempotency-Key', async () => {
    let failures = 1;
    server = await serve((_req, _body, res) => (failures-- > 0 ? json(res, 503, errorBody('api_error', 'service_unavailable')) : json(res, 201, order)));

    await clientOf(server.url).orders.create({ amount: 1, payer_name: 'a', external_id: 'a', item_name: 'a' });

    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.headers['idempotency-key']).toBe(server.requests[0]!.headers['idempotency-key']);
    expect(server.requests[1]!.body).toBe(server.requests[0]!.body);
  });

  test('when Retry-After asks for longer than the client waits, then the 429 is thrown with it', async () => {
    server = await serve((_req, _body, res) => json(res, 429, errorBody('rate_limit_error', 'rate_limited'), { 'retry-after': '3600' }));
    const waits: number[] = [];

    const error = await clientOf(server.url, waits)
      .orders.retrieve(order.id)
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 3600 });
    expect(waits).toEqual([]);
  });

  test('when nothing answers, then a read is tried again and a ConnectionError thrown in the end', async () => {
    server = await serve(() => undefined);
    const url = server.url;
    await server.close();
    server = undefined;
    const waits: number[] = [];

    const error = await clientOf(url, waits, 2)
      .orders.retrieve(order.id)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConnectionError);
    expect(waits).toHaveLength(2);
  });

  test('when Retry-After is a date, then the wait runs until it', () => {
    const now = Date.parse('2026-11-24T00:00:00Z');
    expect(retryAfterMs('Tue, 24 Nov 2026 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});

describe('lists', () => {
  test('when a list has more pages, then listAll asks for each after the last id until has_more is false', async () => {
    const ids = ['evt_a', 'evt_b', 'evt_c', 'evt_d', 'evt_e'];
    server = await serve((req, _body, res) => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      const start = query.has('starting_after') ? ids.indexOf(query.get('starting_after')!) + 1 : 0;
      const limit = Number(query.get('limit'));
      json(res, 200, { object: 'list', data: ids.slice(start, start + limit).map((id) => ({ id })), has_more: start + limit < ids.length });
    });

    const seen: string[] = [];
    for await (const event of clientOf(server.url).events.listAll({ limit: 2, type: 'order.paid' })) seen.push(event.id);

    expect(seen).toEqual(ids);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/events?limit=2&type=order.paid',
      '/v1/events?limit=2&type=order.paid&starting_after=evt_b',
      '/v1/events?limit=2&type=order.paid&starting_after=evt_d',
    ]);
  });
});

describe('what an answer says beside its object', () => {
  test('when an order is created, found again by its external_id, and replayed, then lastResponse tells each apart, and the order itself carries nothing more', async () => {
    const answers: [number, Record<string, string>][] = [
      [201, {}],
      [200, {}],
      [201, { 'idempotent-replayed': 'true' }],
    ];
    server = await serve((_req, _body, res) => {
      const [status, headers] = answers.shift()!;
      json(res, status, order, headers);
    });
    const client = clientOf(server.url);
    const body = { amount: 5000, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ', external_id: 'a', item_name: 'x' };

    const created = await client.orders.create(body, { idempotencyKey: 'key-1' });
    const found = await client.orders.create(body);
    const replayed = await client.orders.create(body, { idempotencyKey: 'key-1' });

    expect(created.lastResponse).toMatchObject({
      statusCode: 201,
      requestId: 'req_00000000000000000000000000000001',
      idempotentReplayed: false,
      idempotencyKey: 'key-1',
    });
    expect(found.lastResponse).toMatchObject({ statusCode: 200, idempotentReplayed: false, idempotencyKey: server.requests[1]!.headers['idempotency-key'] });
    expect(replayed.lastResponse).toMatchObject({ statusCode: 201, idempotentReplayed: true, idempotencyKey: 'key-1' });
    expect(replayed.lastResponse.headers.get('idempotent-replayed')).toBe('true');
    expect(created).toEqual(order);
    expect(JSON.parse(JSON.stringify(created))).toEqual(order);
    expect(Object.keys(created)).toEqual(Object.keys(order));
  });

  test('when a list or a resend is answered, then its page and its 202 carry lastResponse too', async () => {
    server = await serve((req, _body, res) =>
      req.url?.endsWith('/resend')
        ? json(res, 202, { object: 'webhook_resend', endpoint_id: 'we_1', event_id: 'evt_1' })
        : json(res, 200, { object: 'list', data: [order], has_more: false }),
    );
    const client = clientOf(server.url);

    const page = await client.orders.list();
    const resent = await client.webhookEndpoints.resend('we_1', 'evt_1');

    expect(page.lastResponse.statusCode).toBe(200);
    expect(resent.lastResponse.statusCode).toBe(202);
  });
});

describe('timeouts and cancellation', () => {
  /** A server that never answers, counting the requests it holds. */
  async function hanging() {
    const held: ServerResponse[] = [];
    const scripted = await serve((_req, _body, res) => void held.push(res));
    return {
      scripted,
      held,
      close: async () => {
        held.forEach((res) => res.destroy());
        await scripted.close();
      },
    };
  }

  test('when a read gets no answer within its timeout, then it is tried again, and in the end a ConnectionError says it timed out', async () => {
    const slow = await hanging();
    const waits: number[] = [];
    try {
      const client = new PaymentsClient({
        apiKey: 'svc_test_x',
        baseUrl: slow.scripted.url,
        timeoutMs: 100,
        maxRetries: 1,
        sleep: async (ms) => void waits.push(ms),
      });

      const error = await client.orders.retrieve(order.id).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).toMatchObject({ timedOut: true, message: `GET /v1/orders/${order.id}: no answer within 100 ms` });
      expect(slow.scripted.requests).toHaveLength(2);
      expect(waits).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });

  test("when one call gives its own timeout, then it wins over the client's, and a POST that may not be repeated is sent once", async () => {
    const slow = await hanging();
    try {
      const client = new PaymentsClient({ apiKey: 'svc_test_x', baseUrl: slow.scripted.url, timeoutMs: 60_000 });
      const started = Date.now();

      const error = await client.orders.cancel(order.id, { timeoutMs: 150 }).catch((e: unknown) => e);

      expect(error).toMatchObject({ name: 'ConnectionError', timedOut: true });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(slow.scripted.requests).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });

  test('when the caller aborts during an attempt, then the call rejects with the reason at once and nothing is retried', async () => {
    const slow = await hanging();
    try {
      const client = new PaymentsClient({ apiKey: 'svc_test_x', baseUrl: slow.scripted.url });
      const controller = new AbortController();
      const call = client.orders.retrieve(order.id, { signal: controller.signal }).catch((e: unknown) => e);
      await waitUntil(() => slow.held.length === 1);

      controller.abort(new Error('the buyer left'));

      expect(await call).toEqual(new Error('the buyer left'));
      expect(slow.scripted.requests).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });

  test('when the caller aborts while the client waits out a Retry-After, then the wait ends at once and no second attempt is sent', async () => {
    server = await serve((_req, _body, res) => json(res, 503, errorBody('api_error', 'service_unavailable'), { 'retry-after': '20' }));
    const client = new PaymentsClient({ apiKey: 'svc_test_x', baseUrl: server.url });
    const controller = new AbortController();
    const started = Date.now();
    const call = client.orders.retrieve(order.id, { signal: controller.signal }).catch((e: unknown) => e);
    await waitUntil(() => server!.requests.length === 1);

    controller.abort();

    expect(await call).toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(server.requests).toHaveLength(1);
  });

  test('when the signal was aborted before the call, then nothing is sent', async () => {
    server = await serve((_req, _body, res) => json(res, 200, order));

    const error = await clientOf(server.url)
      .orders.retrieve(order.id, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ name: 'AbortError' });
    expect(server.requests).toHaveLength(0);
  });
});

describe('errors by operation', () => {
  test('when an operation is refused, then its ApiError names it, and ApiError.is recognises it by that operation only', async () => {
    server = await serve((_req, _body, res) => json(res, 409, errorBody('conflict_error', 'order_not_open')));

    const error = await clientOf(server.url)
      .orders.cancel(order.id)
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ operation: 'cancelOrder', code: 'order_not_open' });
    expect(ApiError.is(error, 'cancelOrder')).toBe(true);
    expect(ApiError.is(error, 'reverseOrderPayment')).toBe(false);
    expect(ApiError.is(new Error('x'), 'cancelOrder')).toBe(false);
    expect(ApiError.is(error, 'cancelOrder') && whatToDo(error)).toBe('read the order: it moved on');
  });
});

/** Checked by tsc: a switch over a cancel's codes that misses one, or names a code cancel cannot answer, does not compile. */
function whatToDo(error: ApiError<ErrorCodeOf<'cancelOrder'>>): string {
  switch (error.code) {
    case 'order_not_open':
      return 'read the order: it moved on';
    case 'resource_missing':
      return 'no such order';
    case 'rate_limited':
    case 'service_unavailable':
    case 'internal_error':
      return 'later';
    case 'invalid_api_key':
    case 'insufficient_scope':
    case 'parameter_invalid':
    case 'invalid_json':
    case 'body_too_large':
    case 'parameter_unknown':
      return 'a bug of ours';
    default: {
      const unhandled: never = error.code;
      return unhandled;
    }
  }
}

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error('the condition never held');
}
