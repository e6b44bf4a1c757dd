import { TestSystem, waitFor } from '@pmatch/testkit';

/** SIGTERM drains: what was accepted finishes, nothing is lost, nothing is done twice. */

let system: TestSystem;

beforeAll(async () => {
  system = await TestSystem.start();
});

afterAll(async () => {
  await system?.stop();
});

describe('graceful shutdown', () => {
  test('when orders-api gets SIGTERM with requests in flight, then every accepted request completes and each 201 is exactly one stored order', async () => {
    const { client } = await system.createMerchant();
    const before = Number((await system.sql('SELECT count(*)::int AS n FROM orders'))[0]!.n);

    const requests = Array.from({ length: 30 }, (_, i) =>
      client.request('POST', '/v1/orders', { amount: 8000 + i, payer_name: 'タナカ', external_id: `drain-${i}`, item_name: 'x' }).catch(() => undefined),
    );
    const exitCode = await system.terminate('orders-api');
    const responses = await Promise.all(requests);

    expect(exitCode).toBe(0);
    const created = responses.filter((r) => r?.status === 201);
    expect(responses.every((r) => r === undefined || r.status === 201)).toBe(true);
    const after = Number((await system.sql('SELECT count(*)::int AS n FROM orders'))[0]!.n);
    expect(after - before).toBe(created.length);
    await system.startService('orders-api');
  });

  test('when the matcher gets SIGTERM while deciding, then every deposit is decided exactly once after it returns', async () => {
    const { client } = await system.createMerchant();
    const orders = await Promise.all(Array.from({ length: 20 }, (_, i) => client.createOrder({ amount: 9000 + i })));

    const deposits = Array.from({ length: 20 }, (_, i) => client.request('POST', '/v1/test/deposits', { amount: 9000 + i, counterparty: 'ヤマダ タロウ' }));
    await waitFor(async () => {
      const rows = await system.sql("SELECT count(*)::int AS n FROM transactions WHERE status <> 'pending'");
      return Number(rows[0]!.n) > 0 ? true : undefined;
    }, { what: 'the first decision' });
    expect(await system.terminate('matcher')).toBe(0);
    await system.startService('matcher');
    const answers = await Promise.all(deposits);

    for (const answer of answers) expect([201, 503]).toContain(answer.status);
    const decided = await waitFor(async () => {
      const rows = await system.sql<{ status: string; n: number }>(
        `SELECT t.status, count(*)::int AS n FROM transactions t JOIN bank_accounts b ON b.id = t.bank_account_id
         WHERE t.amount BETWEEN 9000 AND 9019 GROUP BY t.status`,
      );
      return rows.length === 1 && rows[0]!.status === 'confirmed' && rows[0]!.n === 20 ? rows : undefined;
    }, { what: 'all 20 deposits to be confirmed' });
    expect(decided).toEqual([{ status: 'confirmed', n: 20 }]);
    const deposited = await system.sql("SELECT count(*)::int AS n FROM events WHERE type = 'transaction.deposited' AND (data->'object'->>'amount')::int BETWEEN 9000 AND 9019");
    expect(deposited[0]!.n).toBe(20);
    for (const order of orders) expect((await client.order(order.id)).status).toBe('paid');
  });
});
