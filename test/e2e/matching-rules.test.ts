import { type MerchantClient, TestSystem, waitFor } from '@pmatch/testkit';

/** Seller-enabled rules decide end to end, and every decision explains itself. */

let system: TestSystem;
const MINUTE = 60 * 1000;
const minutesAgo = (n: number) => new Date(system.now().getTime() - n * MINUTE).toISOString();

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
      near_misses: [],
      candidates: [
        {
          order_id: order.id,
          fit: null,
          fit_rules: null,
          excluded_because: null,
          not_chosen_because: 'name_differs',
          would_fit: 'rule:corporate_abbreviation',
        },
      ],
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
      { order_id: order.id, fit: 'rule:corporate_abbreviation', fit_rules: ['corporate_abbreviation'], excluded_because: null, not_chosen_because: null },
    ]);
    expect((await client.order(order.id)).payment).toMatchObject({ reason: 'rule:corporate_abbreviation', decided_by: 'auto' });
  });

  test('when the other three rules are enabled but not corporate_abbreviation, then ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ is still held for 株式会社ヤマダショウジ', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['kana_width', 'decorated', 'truncated'] });
    const order = await client.createOrder({ amount: 4410, payer_name: '株式会社ヤマダショウジ' });

    const deposit = await client.deposit(4410, 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');

    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [order.id], decision: { reason: 'no_name_fits' } });
    expect((await client.order(order.id)).status).toBe('open');
  });

  test('when rules are set through the ops CLI, then matching uses them', async () => {
    const { client, orgId } = await system.createMerchant();
    await system.ops('settings', 'set', '--org', orgId, '--mode', 'test', '--matching-rules', 'kana_width,decorated');
    const order = await client.createOrder({ amount: 4500, payer_name: 'キュウヨ ショウテン' });

    const deposit = await client.deposit(4500, '0012345678 ｷﾕｳﾖ ｼﾖｳﾃﾝ');

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id });
    expect((await client.order(order.id)).payment.reason).toBe('rule:decorated');
  });

  test('when no rule is enabled and a second order has the exact name in another width, then held with both: the other would fit by kana_width', async () => {
    const { client } = await system.createMerchant();
    const exact = await client.createOrder({ amount: 4590, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
    const wider = await client.createOrder({ amount: 4590, payer_name: 'ヤマダ タロウ' });

    const deposit = await client.deposit(4590, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [exact.id, wider.id], decision: { reason: 'several_orders_fit' } });
    expect(deposit.decision.candidates).toEqual([
      { order_id: exact.id, fit: 'exact', fit_rules: [], excluded_because: null, not_chosen_because: 'several_orders_fit' },
      { order_id: wider.id, fit: null, fit_rules: null, excluded_because: null, not_chosen_because: 'several_orders_fit', would_fit: 'rule:kana_width' },
    ]);
  });

  test('when an exact fit and a rule fit compete, then held with both: one name spelled two ways may be two people', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['kana_width'] });
    const exact = await client.createOrder({ amount: 4600, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
    const byRule = await client.createOrder({ amount: 4600, payer_name: 'ヤマダ タロウ' });
    const a = await client.createOrder({ amount: 4700, payer_name: 'ヤマダ タロウ' });
    const b = await client.createOrder({ amount: 4700, payer_name: 'やまだ たろう' });

    const first = await client.deposit(4600, 'ﾔﾏﾀﾞ ﾀﾛｳ');
    const second = await client.deposit(4700, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(first).toMatchObject({ status: 'held', candidate_order_ids: [exact.id, byRule.id], decision: { reason: 'several_orders_fit' } });
    expect(second.status).toBe('held');
    expect([...second.candidate_order_ids].sort()).toEqual([a.id, b.id].sort());
    expect(second.decision.reason).toBe('several_orders_fit');
  });
});

describe('truncated names: a cut only where a bank field ends', () => {
  const LONG_NAME = 'ヨコハマミナトミライデジタルマーケティングアンドブランディングソリューションズジギョウブ';
  const CUT_AT_48 = 'ﾖｺﾊﾏﾐﾅﾄﾐﾗｲﾃﾞｼﾞﾀﾙﾏｰｹﾃｲﾝｸﾞｱﾝﾄﾞﾌﾞﾗﾝﾃﾞｲﾝｸﾞｿﾘﾕｰｼﾖﾝｽﾞｼ';

  test('when truncated is on and ｻﾄｳ ﾕｳｺ pays, then the order of サトウ ユウゴ is not paid: held, its candidate explained', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['truncated'] });
    const yugo = await client.createOrder({ amount: 4960, payer_name: 'サトウ ユウゴ' });

    const deposit = await client.deposit(4960, 'ｻﾄｳ ﾕｳｺ');

    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [yugo.id] });
    expect(deposit.decision).toEqual({
      reason: 'no_name_fits',
      near_misses: [],
      candidates: [{ order_id: yugo.id, fit: null, fit_rules: null, excluded_because: null, not_chosen_because: 'name_differs' }],
    });
    expect((await client.order(yugo.id)).status).toBe('open');
  });

  test('when every rule is on and another person has an open order of the same amount, then ｻﾄｳ ﾕｳｺ is held with both explained', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['kana_width', 'corporate_abbreviation', 'decorated', 'truncated'] });
    const yugo = await client.createOrder({ amount: 4961, payer_name: 'サトウ ユウゴ' });
    const other = await client.createOrder({ amount: 4961, payer_name: 'スズキ ハナコ' });

    const deposit = await client.deposit(4961, 'ｻﾄｳ ﾕｳｺ');

    expect(deposit).toMatchObject({ status: 'held', decision: { reason: 'no_name_fits' } });
    expect([...deposit.candidate_order_ids].sort()).toEqual([yugo.id, other.id].sort());
    expect(deposit.decision.candidates.map((c: any) => [c.order_id, c.fit, c.not_chosen_because])).toEqual([
      [yugo.id, null, 'name_differs'],
      [other.id, null, 'name_differs'],
    ]);
    expect((await client.order(yugo.id)).status).toBe('open');
  });

  test('when a long name arrives cut at 48, with its last dakuten cut off there, then truncated confirms its order', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['truncated'] });
    const order = await client.createOrder({ amount: 4962, payer_name: LONG_NAME });
    await client.createOrder({ amount: 4962, payer_name: 'スズキ ハナコ' });

    const deposit = await client.deposit(4962, CUT_AT_48);

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id, decision: { reason: 'rule:truncated' } });
    expect((await client.order(order.id)).payment).toMatchObject({ reason: 'rule:truncated', transaction_id: deposit.id });
  });

  test('when a sender code and a name cut together fill the 48, then decorated and truncated together confirm', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['decorated', 'truncated'] });
    const order = await client.createOrder({ amount: 4963, payer_name: LONG_NAME });

    const deposit = await client.deposit(4963, `1234567890 ${CUT_AT_48.slice(0, 37)}`);

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id, decision: { reason: 'rule:truncated' } });
  });
});

describe('holding for a person where a rule would guess', () => {
  test('when only truncated is enabled and a short name begins another payer name, then only the order with its own name fits: a short name is no cut', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['truncated'] });
    const a = await client.createOrder({ amount: 4951, payer_name: 'ヤマダタロウ' });
    const b = await client.createOrder({ amount: 4951, payer_name: 'ヤマダタロウジ' });

    const deposit = await client.deposit(4951, 'ﾔﾏﾀﾞﾀﾛｳ');

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: a.id });
    expect(deposit.decision.candidates.find((c: any) => c.order_id === b.id)).toMatchObject({ fit: null, not_chosen_because: 'name_differs' });
  });

  test('when the deposit and the order carry different corporate forms, then held, not confirmed', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['corporate_abbreviation'] });
    const order = await client.createOrder({ amount: 4952, payer_name: '株式会社スズキデンキ' });

    const deposit = await client.deposit(4952, 'ﾕ)ｽｽﾞｷﾃﾞﾝｷ');

    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [order.id], decision: { reason: 'no_name_fits' } });
  });

  test('when an expired order fits exactly and an open one only by a rule, then held with both: the expired order was most likely paid late', async () => {
    const { client } = await system.createMerchant();
    await client.request('PATCH', '/v1/settings', { matching_rules: ['kana_width', 'corporate_abbreviation', 'decorated', 'truncated'] });
    const expiring = await client.createOrder({
      amount: 4953,
      payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ',
      expires_at: new Date(system.now().getTime() + 60 * MINUTE).toISOString(),
    });
    system.advanceClock(2 * 60 * MINUTE);
    await waitFor(async () => ((await client.order(expiring.id)).status === 'expired' ? true : undefined), { what: 'the order to expire' });
    const open = await client.createOrder({ amount: 4953, payer_name: 'ヤマダ タロウ' });

    const deposit = await client.deposit(4953, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [expiring.id, open.id], decision: { reason: 'expired_order_fits' } });
    expect((await client.order(open.id)).status).toBe('open');
  });
});

describe('exact name and order date (no rule enabled)', () => {
  test('when the depositor name has leading and trailing whitespace, then it is trimmed and the order confirmed as exact', async () => {
    const { client } = await system.createMerchant();
    const order = await client.createOrder({ amount: 4901, payer_name: 'ヤマダ タロウ' });

    const deposit = await client.deposit(4901, '  ヤマダ タロウ\u3000');

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id });
    expect((await client.order(order.id)).payment).toMatchObject({ reason: 'exact', transaction_id: deposit.id });
  });

  test('when whitespace inside the name differs, then it is not exact and the deposit is held', async () => {
    const { client } = await system.createMerchant();
    const order = await client.createOrder({ amount: 4902, payer_name: 'ヤマダ タロウ' });

    const deposit = await client.deposit(4902, 'ヤマダタロウ');

    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [order.id] });
  });

  test("when the deposit is earlier than the order's ordered_at, then it never matches that order", async () => {
    const { client } = await system.createMerchant();
    const order = await client.createOrder({ amount: 4903, ordered_at: minutesAgo(10) });

    const deposit = await client.deposit(4903, 'ヤマダ タロウ', { occurred_at: minutesAgo(30) });

    expect(deposit).toMatchObject({ status: 'unmatched', order_id: null, candidate_order_ids: [] });
    expect((await client.order(order.id)).status).toBe('open');
  });
});

describe('late orders under matching rules', () => {
  async function sellerWithRules(autoConfirm: boolean): Promise<MerchantClient> {
    const { client } = await system.createMerchant();
    const settings = await client.request('PATCH', '/v1/settings', { matching_rules: ['corporate_abbreviation'], auto_confirm_late_orders: autoConfirm });
    expect(settings.status).toBe(200);
    return client;
  }

  async function waitForStatus(client: MerchantClient, id: string, status: string): Promise<any> {
    return waitFor(
      async () => {
        const t = await client.transaction(id);
        return t.status === status ? t : undefined;
      },
      { what: `transaction ${id} to become ${status}` },
    );
  }

  test('when a late order fits an unmatched deposit by a rule and the seller auto-confirms, then it is confirmed with reason rule:corporate_abbreviation', async () => {
    const client = await sellerWithRules(true);
    const deposit = await client.deposit(4801, 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');
    expect(deposit.status).toBe('unmatched');

    const order = await client.createOrder({ amount: 4801, payer_name: '株式会社ヤマダショウジ', ordered_at: minutesAgo(30) });

    const confirmed = await waitForStatus(client, deposit.id, 'confirmed');
    expect(confirmed).toMatchObject({ order_id: order.id, decision: { reason: 'rule:corporate_abbreviation' } });
    expect((await client.order(order.id)).payment).toMatchObject({ transaction_id: deposit.id, reason: 'rule:corporate_abbreviation', decided_by: 'auto' });
  });

  test('when a late order fits an unmatched deposit by a rule without auto-confirmation, then the deposit is held for it', async () => {
    const client = await sellerWithRules(false);
    const deposit = await client.deposit(4802, 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');

    const order = await client.createOrder({ amount: 4802, payer_name: '株式会社ヤマダショウジ', ordered_at: minutesAgo(30) });

    const held = await waitForStatus(client, deposit.id, 'held');
    expect(held).toMatchObject({ candidate_order_ids: [order.id], decision: { reason: 'late_order' } });
    expect(held.decision.candidates).toEqual([
      {
        order_id: order.id,
        fit: 'rule:corporate_abbreviation',
        fit_rules: ['corporate_abbreviation'],
        excluded_because: null,
        not_chosen_because: 'late_order',
      },
    ]);
    expect((await client.order(order.id)).status).toBe('open');
  });
});
