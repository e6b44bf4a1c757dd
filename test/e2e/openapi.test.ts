import { TestSystem, api, assertDocumentedResponse, documentInUse } from '@pmatch/testkit';

let system: TestSystem;

beforeAll(async () => {
  system = await TestSystem.start();
});

afterAll(async () => {
  await system?.stop();
});

describe('OpenAPI document', () => {
  test('when /v1/openapi.json is fetched, then it is an OpenAPI 3.1 document of every /v1 operation', async () => {
    const res = await api(system.apiUrl, 'GET', '/v1/openapi.json');

    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.servers).toEqual([{ url: system.apiUrl }]);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/v1/orders', '/v1/orders/{id}', '/v1/transactions/{id}/match', '/v1/events', '/v1/test/deposits', '/v1/settings']),
    );
    expect(res.body.components.schemas.Error.properties.error.required).toEqual(['type', 'code', 'message', 'request_id']);
  });

  test('when responses are checked, then against the document the API serves, not one made in the test', async () => {
    const served = await api(system.apiUrl, 'GET', '/v1/openapi.json');

    expect(documentInUse()).toEqual(served.body);
    expect((documentInUse() as { servers: unknown }).servers).toEqual([{ url: system.apiUrl }]);
  });

  test('when a response differs from its document, /v1 or /ingest/v1, then the end-to-end check fails', async () => {
    const { client } = await system.createMerchant();
    const order = await client.createOrder();

    expect(() => assertDocumentedResponse('GET', `/v1/orders/${order.id}`, 200, order)).not.toThrow();
    expect(() => assertDocumentedResponse('GET', `/v1/orders/${order.id}`, 200, { ...order, amount: '5000' })).toThrow(/amount/);
    expect(() => assertDocumentedResponse('GET', `/v1/orders/${order.id}`, 200, { ...order, status: 'lost' })).toThrow(/status/);
    expect(() => assertDocumentedResponse('GET', '/v1/orders', 404, { error: { type: 'x' } })).toThrow();
    expect(() => assertDocumentedResponse('GET', '/v1/unknown', 200, {})).toThrow(/not in the OpenAPI document/);
    expect(() =>
      assertDocumentedResponse('POST', '/ingest/v1/notifications', 202, { transaction_id: 'txn_AAAAAAAAAAAAAAAAAAAAAAAA', duplicate: false }),
    ).not.toThrow();
    expect(() => assertDocumentedResponse('POST', '/ingest/v1/notifications', 202, { transaction_id: 'txn_AAAAAAAAAAAAAAAAAAAAAAAA' })).toThrow(/duplicate/);
    expect(() =>
      assertDocumentedResponse('POST', '/ingest/v1/notifications', 401, {
        error: { type: 'authentication_error', code: 'rate_limited', message: 'x', request_id: 'r' },
      }),
    ).toThrow(/code/);
  });
});
