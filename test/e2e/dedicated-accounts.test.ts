import { TestSystem } from '@pmatch/testkit';

/**
 * Dedicated transfer accounts over HTTP, through the built services: an order asks for one, a
 * returning buyer keeps theirs, a deposit into it pays its order whatever the name, and the test
 * mode's pool of five runs out with a 409 that stores nothing.
 */

let system: TestSystem;

beforeAll(async () => {
  system = await TestSystem.start();
});

afterAll(async () => {
  await system?.stop();
});

const ordersOf = async (orgId: string) =>
  Number((await system.sql<{ n: string }>(`SELECT count(*) AS n FROM orders WHERE organisation_id = $1`, [orgId]))[0]!.n);

test("when orders ask for dedicated accounts, then each gets one of the pool with transfer_to, a returning buyer keeps theirs, a deposit under any name pays the order, and the pool's end is 409 no_dedicated_account_free with nothing stored", async () => {
  const { orgId, client } = await system.createMerchant();
  await client.request('PATCH', '/v1/settings', { matching_rules: ['dedicated_account'] });
  const accounts = (await client.request('GET', '/v1/bank-accounts')).body.data as any[];
  const pool = accounts.filter((a) => a.dedicated);
  expect(pool).toHaveLength(5);

  const perOrder = await client.request('POST', '/v1/orders', {
    amount: 12800,
    payer_name: 'ヤマダ タロウ',
    external_id: 'EC-D-1',
    item_name: 'お米 5kg',
    dedicated_account: true,
  });
  const buyerFirst = await client.request('POST', '/v1/orders', {
    amount: 3000,
    payer_name: 'スズキ ハナコ',
    external_id: 'EC-D-2',
    item_name: '定期便 1月',
    dedicated_account: true,
    customer_reference: 'cust-7',
  });
  const buyerNext = await client.request('POST', '/v1/orders', {
    amount: 4500,
    payer_name: 'スズキ ハナコ',
    external_id: 'EC-D-3',
    item_name: '定期便 2月',
    dedicated_account: true,
    customer_reference: 'cust-7',
  });

  expect([perOrder.status, buyerFirst.status, buyerNext.status]).toEqual([201, 201, 201]);
  const given = pool.find((a) => a.id === perOrder.body.bank_account_id);
  expect(perOrder.body).toMatchObject({ dedicated_account: true, customer_reference: null, status: 'open' });
  expect(given).toBeDefined();
  expect(perOrder.body.transfer_to).toEqual({
    bank_code: given.bank_code,
    bank_name: given.bank_name,
    branch_code: given.branch_code,
    branch_name: given.branch_name,
    account_type: expect.stringMatching(/^(ordinary|current|savings)$/),
    account_number: expect.stringMatching(new RegExp(`^[0-9]{3}${given.account_number_last4}$`)),
    holder_name: given.holder_name,
  });
  expect(buyerFirst.body).toMatchObject({ dedicated_account: true, customer_reference: 'cust-7' });
  expect(buyerFirst.body.bank_account_id).not.toBe(perOrder.body.bank_account_id);
  expect(pool.map((a) => a.id)).toContain(buyerFirst.body.bank_account_id);
  expect(buyerNext.body.bank_account_id).toBe(buyerFirst.body.bank_account_id);
  expect(buyerNext.body.transfer_to).toEqual(buyerFirst.body.transfer_to);

  const paid = await client.deposit(12800, 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ', { bank_account_id: perOrder.body.bank_account_id });
  expect(paid).toMatchObject({ status: 'confirmed', order_id: perOrder.body.id, decision: { reason: 'rule:dedicated_account' } });
  expect((await client.order(perOrder.body.id)).status).toBe('paid');

  // Two accounts are taken (the paid order's rests); three are free.
  for (const n of [4, 5, 6]) {
    const more = await client.request('POST', '/v1/orders', {
      amount: 1000,
      payer_name: 'タナカ',
      external_id: `EC-D-${n}`,
      item_name: 'item',
      dedicated_account: true,
    });
    expect([n, more.status]).toEqual([n, 201]);
  }
  const before = await ordersOf(orgId);

  const refused = await client.request('POST', '/v1/orders', {
    amount: 1000,
    payer_name: 'タナカ',
    external_id: 'EC-D-7',
    item_name: 'item',
    dedicated_account: true,
  });

  expect(refused.status).toBe(409);
  expect(refused.body).toEqual({
    error: {
      type: 'conflict_error',
      code: 'no_dedicated_account_free',
      message: expect.stringContaining('No dedicated transfer account is free'),
      request_id: expect.any(String),
    },
  });
  expect(await ordersOf(orgId)).toBe(before);
  expect((await client.request('GET', '/v1/orders?external_id=EC-D-7')).body.data).toEqual([]);
});
