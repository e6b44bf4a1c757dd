import { TestSystem, api } from '@pmatch/testkit';

/**
 * `POST /v1/orders` without an Idempotency-Key takes its API key from orders-api's cache once the
 * key has been read, and its write checks the key instead. These are the promises that must hold
 * all the same: a revoked key is refused from the next request on, whatever the request, and a
 * bank account added to a key's scope counts from the next request on.
 */

let system: TestSystem;
let orgId: string;
let accountCount = 0;

const order = (externalId: string, extra: Record<string, unknown> = {}) => ({
  amount: 3300,
  payer_name: 'ヤマダ タロウ',
  external_id: externalId,
  item_name: '帽子',
  ...extra,
});

beforeAll(async () => {
  system = await TestSystem.start();
  ({ orgId } = await system.createMerchant());
  await addLiveAccount();
});

afterAll(async () => {
  await system?.stop();
});

async function addLiveAccount(): Promise<string> {
  accountCount += 1;
  const account = await system.addLiveBankAccount(orgId, { number: String(1_000_000 + accountCount), holder: 'ﾔﾏﾀﾞｼﾖｳﾃﾝ' });
  return String(account.id);
}

async function liveKey(name: string): Promise<{ id: string; key: string }> {
  const issued = await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', name);
  return { id: String(issued.id), key: String(issued.key) };
}

/** orders-api's count of API key lookups, by where the key came from. */
async function lookups(): Promise<{ database: number; cache: number }> {
  const metrics = await system.metrics('orders-api');
  const count = (source: string) => Number(new RegExp(`^api_key_lookups_total\\{source="${source}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
  return { database: count('database'), cache: count('cache') };
}

async function lookupsDuring(run: () => Promise<unknown>): Promise<{ database: number; cache: number }> {
  const before = await lookups();
  await run();
  const after = await lookups();
  return { database: after.database - before.database, cache: after.cache - before.cache };
}

/** The external_ids of the organisation's live orders, read with a key of its own. */
async function liveExternalIds(): Promise<string[]> {
  const { key } = await liveKey('reader');
  const res = await api(system.apiUrl, 'GET', '/v1/orders?limit=100', { key });
  expect(res.status).toBe(200);
  return res.body.data.map((o: { external_id: string }) => o.external_id);
}

test('when a key creates orders one after another, then it is read once and only new orders without an Idempotency-Key take it from the cache', async () => {
  const { key } = await liveKey('cache use');

  expect(await lookupsDuring(() => api(system.apiUrl, 'POST', '/v1/orders', { key, body: order('cache-1') }))).toEqual({ database: 1, cache: 0 });
  const cachedPosts = await lookupsDuring(async () => {
    for (const id of ['cache-2', 'cache-3']) expect((await api(system.apiUrl, 'POST', '/v1/orders', { key, body: order(id) })).status).toBe(201);
  });
  expect(cachedPosts).toEqual({ database: 0, cache: 2 });

  const withIdempotencyKey = () => api(system.apiUrl, 'POST', '/v1/orders', { key, body: order('cache-4'), headers: { 'idempotency-key': 'cache-4' } });
  expect(await lookupsDuring(withIdempotencyKey)).toEqual({ database: 1, cache: 0 });
  expect(await lookupsDuring(() => api(system.apiUrl, 'GET', '/v1/orders?limit=1', { key }))).toEqual({ database: 1, cache: 0 });
});

describe('when a key is revoked after orders-api cached it', () => {
  /** A key that created an order (`external_id` first-<name>) twice, the second time from the cache, then was revoked. */
  async function revokedAfterCaching(name: string): Promise<string> {
    const issued = await liveKey(name);
    const posts = await lookupsDuring(async () => {
      for (const id of [`first-${name}`, `second-${name}`]) {
        expect((await api(system.apiUrl, 'POST', '/v1/orders', { key: issued.key, body: order(id) })).status).toBe(201);
      }
    });
    expect(posts).toEqual({ database: 1, cache: 1 });
    await system.ops('key', 'revoke', '--key', issued.id);
    return issued.key;
  }

  const refused = async (res: { status: number; body: any }) => {
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  };

  test('then a new order is 401 and nothing is stored', async () => {
    const key = await revokedAfterCaching('new');

    await refused(await api(system.apiUrl, 'POST', '/v1/orders', { key, body: order('revoked-after') }));

    expect(await liveExternalIds()).not.toContain('revoked-after');
  });

  test('then the same order again is 401, not the stored order', async () => {
    const key = await revokedAfterCaching('again');

    await refused(await api(system.apiUrl, 'POST', '/v1/orders', { key, body: order('first-again') }));
  });

  test.each([
    ['an invalid order', JSON.stringify(order('revoked-invalid', { amount: -1 }))],
    ['a body that is not JSON', '{"amount": 1,'],
  ])('then %s is 401, not 400', async (what, rawBody) => {
    const key = await revokedAfterCaching(what.replaceAll(' ', '-'));

    await refused(await api(system.apiUrl, 'POST', '/v1/orders', { key, rawBody, headers: { 'content-type': 'application/json' } }));
  });
});

describe('when a bank account is added after orders-api cached a key of the organisation', () => {
  let onlyAccount: string;
  let naming: string;
  let omitting: string;
  let added: string;

  beforeAll(async () => {
    // A second organisation, so that the key's scope starts with exactly one live account.
    ({ orgId } = await system.createMerchant({ name: '追加口座商店' }));
    onlyAccount = await addLiveAccount();
    naming = (await liveKey('names the new account')).key;
    omitting = (await liveKey('names no account')).key;
    for (const [key, id] of [
      [naming, 'added-warm-1'],
      [omitting, 'added-warm-2'],
    ] as const) {
      const res = await api(system.apiUrl, 'POST', '/v1/orders', { key, body: order(id) });
      expect(res.status).toBe(201);
      expect(res.body.bank_account_id).toBe(onlyAccount);
    }
    added = await addLiveAccount();
  });

  test('then an order naming the new account is created on it', async () => {
    const res = await api(system.apiUrl, 'POST', '/v1/orders', { key: naming, body: order('added-named', { bank_account_id: added }) });

    expect(res.status).toBe(201);
    expect(res.body.bank_account_id).toBe(added);
  });

  test('then an order naming no account is refused, as the key now has two, and nothing is stored', async () => {
    const res = await api(system.apiUrl, 'POST', '/v1/orders', { key: omitting, body: order('added-omitted') });

    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_missing', param: 'bank_account_id' });
    expect(await liveExternalIds()).not.toContain('added-omitted');
  });
});
