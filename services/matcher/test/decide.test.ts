import { Decision, NAME_RULES } from '@pmatch/contracts';
import { decide, exactName, heldInstead, type CandidateOrder } from '../src/domain/decide';
import { nameMatcher } from '../src/domain/names/matcher';

const now = new Date('2026-11-22T10:00:00Z');
const deposit = { amount: 5000, counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', occurredAt: new Date('2026-11-22T09:00:00Z') };

function order(id: string, overrides: Partial<CandidateOrder> = {}): CandidateOrder {
  return {
    id,
    status: 'open',
    payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ',
    orderedAt: new Date('2026-11-21T00:00:00Z'),
    expiresAt: new Date('2026-12-05T00:00:00Z'),
    ...overrides,
  };
}

describe('decide', () => {
  test('when exactly one open order fits by name, then confirmed with reason exact', () => {
    const decision = decide(deposit, [order('ord_a'), order('ord_b', { payerName: 'ｽｽﾞｷ' })], exactName, now);
    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_a', reason: 'exact' });
  });

  test('when the names differ only in leading and trailing whitespace, then they fit exactly', () => {
    const decision = decide({ ...deposit, counterparty: '  ﾔﾏﾀﾞ ﾀﾛｳ ' }, [order('ord_a', { payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ  ' })], exactName, now);
    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_a' });
  });

  test('when inner whitespace differs, then the name does not fit exactly and a person decides', () => {
    const decision = decide({ ...deposit, counterparty: 'ﾔﾏﾀﾞﾀﾛｳ' }, [order('ord_a')], exactName, now);
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_a'] });
    expect(decision.explanation.reason).toBe('no_name_fits');
  });

  test('when two open orders fit equally, then held with both', () => {
    const decision = decide(deposit, [order('ord_a'), order('ord_b')], exactName, now);
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_a', 'ord_b'] });
    expect(decision.explanation.reason).toBe('several_orders_fit');
  });

  test('when no order has the amount, then unmatched', () => {
    expect(decide(deposit, [], exactName, now)).toMatchObject({ outcome: 'unmatched' });
  });

  test('when the only fitting order was placed after the deposit, then it is never matched', () => {
    const late = order('ord_late', { orderedAt: new Date('2026-11-22T09:30:00Z') });
    const decision = decide(deposit, [late], exactName, now);
    expect(decision).toMatchObject({ outcome: 'unmatched' });
    expect(decision.explanation.candidates).toEqual([
      { order_id: 'ord_late', fit: 'exact', fit_rules: [], excluded_because: 'ordered_after_deposit', not_chosen_because: 'ordered_after_deposit' },
    ]);
  });

  test('when ordered_at equals the deposit time, then the order is a candidate', () => {
    const decision = decide(deposit, [order('ord_a', { orderedAt: deposit.occurredAt })], exactName, now);
    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_a' });
  });

  test('when the only fitting order is expired, then held with that order, never confirmed', () => {
    const decision = decide(deposit, [order('ord_x', { status: 'expired' }), order('ord_y', { payerName: 'ｽｽﾞｷ' })], exactName, now);
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_x'] });
    expect(decision.explanation.reason).toBe('only_expired_orders_fit');
  });

  test('when an open order is past expires_at at decision time, then it counts as expired', () => {
    const decision = decide(deposit, [order('ord_a', { expiresAt: new Date('2026-11-22T09:59:59Z') })], exactName, now);
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_a'] });
  });

  test('when an expired order fits as well as the only open one, then held with both: its buyer most likely paid late', () => {
    const decision = decide(deposit, [order('ord_old', { status: 'expired' }), order('ord_new')], exactName, now);
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_old', 'ord_new'] });
    expect(decision.explanation.reason).toBe('expired_order_fits');
  });

  test('when an expired order fits exactly and an open one only by a rule, then held with both', () => {
    const decision = decide(
      deposit,
      [order('ord_expired', { status: 'expired' }), order('ord_open', { payerName: 'ヤマダ タロウ' })],
      nameMatcher(NAME_RULES),
      now,
    );
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_expired', 'ord_open'] });
    expect(decision.explanation.candidates).toEqual([
      { order_id: 'ord_expired', fit: 'exact', fit_rules: [], excluded_because: 'expired', not_chosen_because: 'expired_order_fits' },
      { order_id: 'ord_open', fit: 'rule:kana_width', fit_rules: ['kana_width'], excluded_because: null, not_chosen_because: 'expired_order_fits' },
    ]);
  });

  test('when an expired order fits only worse than the open one, then held with both all the same', () => {
    const decision = decide(
      deposit,
      [order('ord_expired', { status: 'expired', payerName: 'ヤマダ タロウ' }), order('ord_open')],
      nameMatcher(NAME_RULES),
      now,
    );
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_open', 'ord_expired'] });
    expect(decision.explanation.reason).toBe('expired_order_fits');
  });

  test('when a second open order fits only by a rule, then held with both, the better fit first: one name spelled two ways may be two people', () => {
    const decision = decide(deposit, [order('ord_rule', { payerName: 'ヤマダ　タロウ' }), order('ord_exact')], nameMatcher(['kana_width']), now);
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_exact', 'ord_rule'] });
    expect(decision.explanation.candidates.map((c) => [c.order_id, c.fit, c.not_chosen_because])).toEqual([
      ['ord_rule', 'rule:kana_width', 'several_orders_fit'],
      ['ord_exact', 'exact', 'several_orders_fit'],
    ]);
  });

  test('when the read stopped at its cap, then held as too_many_candidates, fitting orders first, even if one fits alone', () => {
    const orders = [order('ord_other', { payerName: 'ｽｽﾞｷ' }), order('ord_fits')];
    const decision = decide(deposit, orders, exactName, now, { allOpenOrdersRead: false });
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_fits'] });
    expect(decision.explanation.reason).toBe('too_many_candidates');
    const many = Array.from({ length: 150 }, (_, i) => order(`ord_${i}`, { payerName: 'ｽｽﾞｷ' }));
    const unread = decide(deposit, many, exactName, now, { allOpenOrdersRead: false });
    expect(unread.outcome === 'held' && unread.candidateOrderIds).toHaveLength(100);
  });

  test('when more than 100 orders fit equally, then at most 100 candidates are listed', () => {
    const many = Array.from({ length: 150 }, (_, i) => order(`ord_${i}`));
    const decision = decide(deposit, many, exactName, now);
    expect(decision.outcome).toBe('held');
    expect(decision.outcome === 'held' && decision.candidateOrderIds).toHaveLength(100);
  });
});

describe('decide with one matching rule enabled (each rule includes kana_width)', () => {
  test('when only truncated is on and a short name starts a longer payer name, then that is another person: the deposit confirms its own name', () => {
    const decision = decide(
      { ...deposit, counterparty: 'ﾔﾏﾀﾞﾀﾛｳ' },
      [order('ord_a', { payerName: 'ヤマダタロウ' }), order('ord_b', { payerName: 'ヤマダタロウジ' })],
      nameMatcher(['truncated']),
      now,
    );
    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_a', reason: 'rule:truncated' });
  });

  test('when only truncated is on and a name cut at 48 is also a whole payer name, then held with both', () => {
    const cut = 'ﾄｳｷﾖｳﾒﾄﾛﾎﾟﾘﾀﾝｱｰﾄｱﾝﾄﾞﾃﾞｻﾞｲﾝｱｶﾃﾞﾐｰｵﾌﾞﾌｱｲﾝｱｰﾂｼﾞﾑｷﾖｸ';
    const decision = decide(
      { ...deposit, counterparty: cut },
      [
        order('ord_whole', { payerName: 'トウキョウメトロポリタンアートアンドデザインアカデミーオブファインアーツジムキョク' }),
        order('ord_longer', { payerName: 'トウキョウメトロポリタンアートアンドデザインアカデミーオブファインアーツジムキョクホンブ' }),
      ],
      nameMatcher(['truncated']),
      now,
    );
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_whole', 'ord_longer'] });
    expect(decision.explanation.reason).toBe('several_orders_fit');
  });

  test('when only decorated is on and one order carries the deposit name with its digits, another without, then held with both', () => {
    const decision = decide(
      { ...deposit, counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ 2' },
      [order('ord_a', { payerName: 'ヤマダ タロウ 2' }), order('ord_b', { payerName: 'ヤマダ タロウ' })],
      nameMatcher(['decorated']),
      now,
    );
    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_a', 'ord_b'] });
  });
});

describe('the explanation of a decision', () => {
  test('when a deposit is confirmed, then each other order says why it was not chosen, and the chosen one says null', () => {
    const orders = [
      order('ord_chosen', { payerName: 'ヤマダ タロウ' }),
      order('ord_other_name', { payerName: 'ｽｽﾞｷ ｲﾁﾛｳ' }),
      order('ord_expired', { status: 'expired', payerName: 'ヤマダ ジロウ' }),
      order('ord_late', { orderedAt: new Date('2026-11-22T09:30:00Z') }),
    ];
    const decision = decide(deposit, orders, nameMatcher(['kana_width']), now);
    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_chosen', reason: 'rule:kana_width' });
    expect(decision.explanation.candidates.map((c) => [c.order_id, c.fit, c.fit_rules, c.excluded_because, c.not_chosen_because])).toEqual([
      ['ord_chosen', 'rule:kana_width', ['kana_width'], null, null],
      ['ord_other_name', null, null, null, 'name_differs'],
      ['ord_expired', null, null, 'expired', 'name_differs'],
      ['ord_late', 'exact', [], 'ordered_after_deposit', 'ordered_after_deposit'],
    ]);
  });

  test('when no name fits, then every order says name_differs', () => {
    const decision = decide(deposit, [order('ord_a', { payerName: 'ｽｽﾞｷ' }), order('ord_b', { payerName: 'ｻﾄｳ' })], exactName, now);
    expect(decision.explanation.candidates.map((c) => c.not_chosen_because)).toEqual(['name_differs', 'name_differs']);
  });

  test('when several orders tie, then the tied ones say several_orders_fit and the others their own reason', () => {
    const decision = decide(deposit, [order('ord_a'), order('ord_b'), order('ord_c', { payerName: 'ｽｽﾞｷ' })], exactName, now);
    expect(decision.explanation.candidates.map((c) => c.not_chosen_because)).toEqual(['several_orders_fit', 'several_orders_fit', 'name_differs']);
  });

  test('when a confirmation is held instead (a late order), then the order says why', () => {
    const decision = decide(deposit, [order('ord_a')], exactName, now);
    if (decision.outcome !== 'confirmed') throw new Error('expected a confirmation');
    const held = heldInstead(decision, 'late_order');
    expect(held).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_a'], explanation: { reason: 'late_order' } });
    expect(held.explanation.candidates[0]?.not_chosen_because).toBe('late_order');
  });

  test('when an explanation is made, then it is what the contract describes', () => {
    const decision = decide(deposit, [order('ord_00000000000000000000000a'), order('ord_00000000000000000000000b', { status: 'expired' })], exactName, now);
    expect(() => Decision.parse(decision.explanation)).not.toThrow();
  });
});
