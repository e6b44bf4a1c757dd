import { TestSystem } from '@pmatch/testkit';

/** Issue 4 end to end: seller-enabled rules decide, and every decision explains itself. */

let system: TestSystem;

beforeAll(async () => {
  system = await TestSystem.start();
});

afterAll(async () => {
  await system?.stop();
});

describe('matching rules', () => {
  test('when corporate_abbreviation is off, then ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ is held for 株式会社ヤマダショウジ, with the reason explained', async () => {
    const { client } = await system.createMerchant();
    const order = await client.createOrder({ amount: 4400, payer_name: '株式会社ヤマダショウジ' });

    const deposit = await client.deposit(4400, 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');

    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [order.id] });
    expect(deposit.decision).toEqual({
      reason: 'no_name_fits',
      candidates: [{ order_id: order.id, fit: null, fit_rules: null, excluded_because: null }],
    });
    expect((await client.order(order.id)).status).toBe('open');
  });

  test('when corporate_abbreviation is on, then the same deposit confirms the order with reason rule:corporate_abbreviation', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['corporate_abbreviation'] });
    const order = await client.createOrder({ amount: 4400, payer_name: '株式会社ヤマダショウジ' });

    const deposit = await client.deposit(4400, 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id });
    expect(deposit.decision.candidates).toEqual([
      { order_id: order.id, fit: 'rule:corporate_abbreviation', fit_rules: ['corporate_abbreviation'], excluded_because: null },
    ]);
    expect((await client.order(order.id)).payment).toMatchObject({ reason: 'rule:corporate_abbreviation', decided_by: 'auto' });
  });

  test('when rules are set through the ops CLI, then matching uses them', async () => {
    const { client, orgId } = await system.createMerchant();
    await system.ops('settings', 'set', '--org', orgId, '--mode', 'test', '--matching-rules', 'kana_width,decorated');
    const order = await client.createOrder({ amount: 4500, payer_name: 'キュウヨ ショウテン' });

    const deposit = await client.deposit(4500, '0012345678 ｷﾕｳﾖ ｼﾖｳﾃﾝ');

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id });
    expect((await client.order(order.id)).payment.reason).toBe('rule:decorated');
  });

  test('when an exact fit and a rule fit compete, then exact wins; when two orders fit equally by rule, then held', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['kana_width'] });
    const exact = await client.createOrder({ amount: 4600, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
    await client.createOrder({ amount: 4600, payer_name: 'ヤマダ タロウ' });
    const a = await client.createOrder({ amount: 4700, payer_name: 'ヤマダ タロウ' });
    const b = await client.createOrder({ amount: 4700, payer_name: 'やまだ たろう' });

    const first = await client.deposit(4600, 'ﾔﾏﾀﾞ ﾀﾛｳ');
    const second = await client.deposit(4700, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(first).toMatchObject({ status: 'confirmed', order_id: exact.id });
    expect(second.status).toBe('held');
    expect([...second.candidate_order_ids].sort()).toEqual([a.id, b.id].sort());
    expect(second.decision.reason).toBe('several_orders_fit');
  });
});
