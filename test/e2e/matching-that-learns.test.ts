import { adapterCredentials, MerchantClient, TestSystem, camtFile, waitFor, zenginFile } from '@pmatch/testkit';
import { liveAccount, notify, signedPost } from './support/bank';

/**
 * Matching that learns, end to end: one transfer is one deposit, money going out never pays an
 * order, people teach payers, transfer codes name orders, near misses are shown.
 */

let system: TestSystem;
const DAY = 24 * 3_600_000;

beforeAll(async () => {
  system = await TestSystem.start();
});

afterAll(async () => {
  await system?.stop();
});

/** A day in Tokyo, counted back from the services' today. */
const tokyoDay = (daysAgo: number) => new Date(system.now().getTime() + 9 * 3_600_000 - daysAgo * DAY).toISOString().slice(0, 10);

/** A merchant with one live account, a live key and an adapter bound to the account. */
async function liveShop(accountNumber: string) {
  const { orgId } = await system.createMerchant();
  const accountId = await liveAccount(system, orgId, { number: accountNumber });
  const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'live')).key));
  const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', accountId);
  return { orgId, accountId, live, adapter: adapterCredentials(adapter) };
}

async function decided(client: MerchantClient, transactionId: string) {
  return waitFor(
    async () => {
      const transaction = await client.transaction(transactionId);
      return transaction.status === 'pending' ? undefined : transaction;
    },
    { what: `transaction ${transactionId} to be decided` },
  );
}

async function transactionsOf(client: MerchantClient): Promise<any[]> {
  return (await client.request('GET', '/v1/transactions?limit=100')).body.data;
}

describe('one transfer is one deposit', () => {
  test('when a pushed deposit comes again in a statement under another reference, then the second is held as a possible duplicate and the second open order stays open', async () => {
    const shop = await liveShop('7200001');
    const day = tokyoDay(0);
    const orderedAt = `${tokyoDay(1)}T10:00:00+09:00`;
    const first = await shop.live.createOrder({ amount: 5000, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ', bank_account_id: shop.accountId, ordered_at: orderedAt });
    const pushed = await notify(system, shop.adapter, {
      bank_account_id: shop.accountId,
      bank_reference: 'push-20261206-0001',
      direction: 'deposit',
      amount: 5000,
      counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
      occurred_at: `${day}T09:30:00+09:00`,
    });
    expect(pushed.status).toBe(202);
    expect((await decided(shop.live, pushed.body.transaction_id)).status).toBe('confirmed');
    const second = await shop.live.createOrder({ amount: 5000, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ', bank_account_id: shop.accountId, ordered_at: orderedAt });

    const statement = zenginFile({
      kind: '01',
      accounts: [{ accountNumber: '7200001', records: [{ date: day, amount: 5000, name: 'ﾔﾏﾀﾞ ﾀﾛｳ', reference: 77 }] }],
    });
    const imported = await signedPost(system, '/ingest/v1/statements', shop.adapter, statement, 'application/octet-stream');

    expect(imported.body).toMatchObject({ stored: 1, duplicates: 0 });
    const twin = (await transactionsOf(shop.live)).find((t) => t.id !== pushed.body.transaction_id)!;
    expect(await decided(shop.live, twin.id)).toMatchObject({
      status: 'held',
      candidate_order_ids: [second.id],
      decision: { reason: 'possible_duplicate', duplicate_of: pushed.body.transaction_id },
    });
    expect((await shop.live.order(second.id)).status).toBe('open');
    expect((await shop.live.order(first.id)).status).toBe('paid');
  });

  test('when a camt.054 credit paid an order and a later camt.054 reverses it (DBIT, RvslInd), then the reversal is a withdrawal linked to the credit, and the open order of that name stays open', async () => {
    const shop = await liveShop('7200002');
    const orderedAt = `${tokyoDay(2)}T10:00:00+09:00`;
    const camt = (entry: Parameters<typeof camtFile>[0]['accounts'][number]['entries'][number]) =>
      camtFile({ kind: '054', version: '08', accounts: [{ accountNumber: '7200002', entries: [entry] }] });
    const first = await shop.live.createOrder({ amount: 6200, payer_name: 'ｽｽﾞｷ ﾊﾅｺ', bank_account_id: shop.accountId, ordered_at: orderedAt });
    await signedPost(
      system,
      '/ingest/v1/statements',
      shop.adapter,
      camt({ amount: 6200, date: tokyoDay(1), name: 'ｽｽﾞｷ ﾊﾅｺ', reference: 'R-88' }),
      'application/xml',
    );
    const credit = (await transactionsOf(shop.live))[0]!;
    expect(await decided(shop.live, credit.id)).toMatchObject({ status: 'confirmed', order_id: first.id });
    const second = await shop.live.createOrder({ amount: 6200, payer_name: 'ｽｽﾞｷ ﾊﾅｺ', bank_account_id: shop.accountId, ordered_at: orderedAt });

    const reversal = camt({ amount: 6200, date: tokyoDay(0), name: 'ｽｽﾞｷ ﾊﾅｺ', reference: 'R-88', credit: false, reversal: true });
    const imported = await signedPost(system, '/ingest/v1/statements', shop.adapter, reversal, 'application/xml');

    expect(imported.body).toMatchObject({ stored: 1, withdrawals: 1 });
    const withdrawal = (await transactionsOf(shop.live)).find((t) => t.id !== credit.id)!;
    expect(withdrawal).toMatchObject({ direction: 'withdrawal', status: 'unmatched', amount: 6200 });
    const [link] = await system.sql<{ cancels: string }>(`SELECT cancels_transaction_id AS cancels FROM statement_records WHERE transaction_id = $1`, [
      withdrawal.id,
    ]);
    expect(link).toEqual({ cancels: credit.id });
    expect((await shop.live.order(second.id)).status).toBe('open');
    expect(await shop.live.events('order.paid')).toHaveLength(1);
  });
});

describe('what people teach, codes and near misses', () => {
  test("when a person matches the mother's deposit with remember_payer, then next month's deposit under her name pays her son's order, and the payer is listed and can be forgotten", async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['kana_width', 'learned_payer'] });
    const first = await client.createOrder({ amount: 3300, payer_name: 'ヤマダ タロウ' });
    const mothers = await client.deposit(3300, 'ﾔﾏﾀﾞ ﾊﾅｺ');
    expect(mothers).toMatchObject({ status: 'held', decision: { reason: 'no_name_fits' } });

    const matched = await client.request('POST', `/v1/transactions/${mothers.id}/match`, { order_id: first.id, remember_payer: true });

    expect(matched.body).toMatchObject({ status: 'confirmed', order_id: first.id });
    const listed = await client.request('GET', '/v1/payer-aliases');
    expect(listed.body).toEqual({
      object: 'list',
      has_more: false,
      data: [
        {
          id: expect.stringMatching(/^pal_/),
          object: 'payer_alias',
          livemode: false,
          bank_account_id: mothers.bank_account_id,
          depositor_name: 'ﾔﾏﾀﾞ ﾊﾅｺ',
          payer_name: 'ヤマダ タロウ',
          created_by: expect.stringMatching(/^api_key:key_/),
          created_at: expect.any(String),
        },
      ],
    });
    system.advanceClock(30 * DAY);
    const nextMonth = await client.createOrder({ amount: 3300, payer_name: 'ヤマダ タロウ' });
    expect(await client.deposit(3300, 'ﾔﾏﾀﾞ ﾊﾅｺ')).toMatchObject({ status: 'confirmed', order_id: nextMonth.id, decision: { reason: 'rule:learned_payer' } });

    const forgotten = await client.request('DELETE', `/v1/payer-aliases/${listed.body.data[0].id}`);

    expect(forgotten.body).toEqual({ id: listed.body.data[0].id, object: 'payer_alias', deleted: true });
    expect((await client.request('GET', '/v1/payer-aliases')).body.data).toEqual([]);
    expect((await client.request('DELETE', `/v1/payer-aliases/${listed.body.data[0].id}`)).status).toBe(404);
    system.advanceClock(DAY);
    await client.createOrder({ amount: 3300, payer_name: 'ヤマダ タロウ' });
    expect(await client.deposit(3300, 'ﾔﾏﾀﾞ ﾊﾅｺ')).toMatchObject({ status: 'held' });
  });

  test('when an order is taken in kanji and the buyer writes its transfer code before their name, then the deposit pays it by rule:transfer_code', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['transfer_code'] });
    const order = await client.createOrder({ amount: 8800, payer_name: '山田 太郎' });
    expect(order.transfer_code).toMatch(/^[1-9][0-9]{6}$/);

    const deposit = await client.deposit(8800, `${order.transfer_code} ﾔﾏﾀﾞ ﾀﾛｳ`);

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id, decision: { reason: 'rule:transfer_code' } });
    expect(deposit.decision.transfer_code).toEqual({ code: order.transfer_code, order_id: order.id });
  });

  test('when no order has the amount but an open order of the name is short by a transfer fee, then the unmatched deposit shows it as a near miss', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['kana_width'] });
    const order = await client.createOrder({ amount: 5000, payer_name: 'サトウ ハナコ' });

    const deposit = await client.deposit(4670, 'ｻﾄｳ ﾊﾅｺ');

    expect(deposit).toMatchObject({ status: 'unmatched', decision: { reason: 'no_order_with_amount' } });
    expect(deposit.decision.near_misses).toEqual([{ order_id: order.id, amount_difference: -330, likely: 'transfer_fee', fit: 'rule:kana_width' }]);
    expect((await client.order(order.id)).status).toBe('open');
  });

  test('when two orders of one account are open, then their transfer codes differ', async () => {
    const { client } = await system.createMerchant();
    const orders = await Promise.all(Array.from({ length: 20 }, () => client.createOrder({ amount: 1000 })));

    expect(new Set(orders.map((o) => o.transfer_code)).size).toBe(20);
  });
});
