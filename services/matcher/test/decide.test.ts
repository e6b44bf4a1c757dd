import { decide, exactName, type CandidateOrder } from '../src/domain/decide';

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
    expect(decision.explanation.candidates).toEqual([{ order_id: 'ord_late', fit: 'exact', fit_rules: null, excluded_because: 'ordered_after_deposit' }]);
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

  test('when one open order fits and an expired one fits too, then the open one is confirmed', () => {
    const decision = decide(deposit, [order('ord_old', { status: 'expired' }), order('ord_new')], exactName, now);
    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_new' });
  });

  test('when a better-ranked fit exists, then it wins over worse fits', () => {
    const ranked = (d: string, p: string) => (d === p ? { reason: 'exact', rank: 0 } : p.startsWith(d) ? { reason: 'rule:truncated', rank: 4 } : undefined);
    const decision = decide({ ...deposit, counterparty: 'ABC' }, [order('ord_prefix', { payerName: 'ABCDEF' }), order('ord_exact', { payerName: 'ABC' })], ranked, now);
    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_exact', reason: 'exact' });
  });

  test('when more than 100 orders fit equally, then at most 100 candidates are listed', () => {
    const many = Array.from({ length: 150 }, (_, i) => order(`ord_${i}`));
    const decision = decide(deposit, many, exactName, now);
    expect(decision.outcome).toBe('held');
    expect(decision.outcome === 'held' && decision.candidateOrderIds).toHaveLength(100);
  });
});
