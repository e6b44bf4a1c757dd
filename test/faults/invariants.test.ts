import { wrongDecision } from './support/invariants';
import type { Scenario, ScenarioKind } from './support/load';

/** The fault suite's decision check must catch every wrong outcome, not only pass good ones. */

const ORDER_A = 'ord_aaaaaaaaaaaaaaaaaaaa';
const ORDER_B = 'ord_bbbbbbbbbbbbbbbbbbbb';
const ORDER_C = 'ord_cccccccccccccccccccc';

type Stored = { status: string; order_id: string | null; candidate_order_ids: string[] };

function scenario(kind: ScenarioKind, orderIds: string[], deposits: (Stored | undefined)[]): { s: Scenario; byId: Map<string, Stored> } {
  const byId = new Map<string, Stored>();
  const notifications = deposits.map((stored, i) => {
    const transactionId = stored === undefined ? undefined : `txn_${i}`;
    if (stored !== undefined) byId.set(`txn_${i}`, stored);
    return {
      bankReference: `ref-${i}`,
      bankAccountId: 'ba_x',
      amount: 10_000,
      attempts: [202],
      answeredIds: transactionId ? [transactionId] : [],
      ...(transactionId ? { transactionId } : {}),
    };
  });
  return { s: { index: 7, kind, amount: 10_000, bankAccountId: 'ba_x', orderIds, abandoned: false, notifications }, byId };
}

const confirmed = (orderId: string): Stored => ({ status: 'confirmed', order_id: orderId, candidate_order_ids: [] });
const held = (candidates: string[]): Stored => ({ status: 'held', order_id: null, candidate_order_ids: candidates });
const unmatched: Stored = { status: 'unmatched', order_id: null, candidate_order_ids: [] };
const pending: Stored = { status: 'pending', order_id: null, candidate_order_ids: [] };

describe('wrongDecision', () => {
  test.each([
    ['confirm', [ORDER_A], [confirmed(ORDER_A)]],
    ['hold', [ORDER_A, ORDER_B], [held([ORDER_B, ORDER_A])]],
    ['unmatched', [], [unmatched]],
    ['double', [ORDER_A], [confirmed(ORDER_A), held([ORDER_A])]],
    ['double', [ORDER_A], [unmatched, confirmed(ORDER_A)]],
  ] as const)('when a %s scenario is decided as it would be without faults, then it passes', (kind, orders, deposits) => {
    const { s, byId } = scenario(kind, [...orders], [...deposits]);
    expect(wrongDecision(s, byId)).toEqual([]);
  });

  test.each([
    ['a confirm scenario has no answered notification', 'confirm', [ORDER_A], [undefined]],
    ['a confirm scenario sent no notification at all', 'confirm', [ORDER_A], []],
    ['a confirm scenario pays another order', 'confirm', [ORDER_A], [confirmed(ORDER_B)]],
    ['an unmatched scenario has no answered notification', 'unmatched', [], [undefined]],
    ['a hold scenario is held with a candidate missing', 'hold', [ORDER_A, ORDER_B], [held([ORDER_A])]],
    ['a hold scenario is held with a stranger among the candidates', 'hold', [ORDER_A, ORDER_B], [held([ORDER_A, ORDER_B, ORDER_C])]],
    ['a hold scenario is confirmed', 'hold', [ORDER_A, ORDER_B], [confirmed(ORDER_A)]],
    ['a double scenario confirms both deposits', 'double', [ORDER_A], [confirmed(ORDER_A), confirmed(ORDER_A)]],
    ['a double scenario confirms neither deposit', 'double', [ORDER_A], [held([ORDER_A]), unmatched]],
    ['a double scenario has one deposit unanswered', 'double', [ORDER_A], [confirmed(ORDER_A), undefined]],
    ['a double scenario leaves its second deposit pending', 'double', [ORDER_A], [confirmed(ORDER_A), pending]],
  ] as const)('when %s, then it is a violation', (_what, kind, orders, deposits) => {
    const { s, byId } = scenario(kind, [...orders], [...deposits]);
    expect(wrongDecision(s, byId)).toHaveLength(1);
  });

  test('when a scenario was abandoned because its order was not created, then it is a violation', () => {
    const { s, byId } = scenario('confirm', [], []);
    s.abandoned = true;
    expect(wrongDecision(s, byId)).toHaveLength(1);
  });
});
