import { Decision, NAME_RULES, isTransferCode, newTransferCode, transferCodeOf, type MatchingRule } from '@pmatch/contracts';
import { decide, type CandidateOrder, type DecisionContext, type DepositFacts } from '../src/domain/decide';
import { decideUnderRules } from '../src/domain/decide-under-rules';
import { nearMissKind } from '../src/domain/near-misses';
import { PayerMemory, depositorKey, payerKey } from '../src/domain/names/payer-memory';
import type { NameReadings } from '../src/domain/names/readings';
import { nameMatcher } from '../src/domain/names/matcher';
import { testReadings } from './support/readings';

const now = new Date('2026-11-22T10:00:00Z');
const deposit: DepositFacts = { amount: 5000, counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', occurredAt: new Date('2026-11-22T09:00:00Z') };
const EVERY_RULE: MatchingRule[] = [...NAME_RULES, 'learned_payer', 'transfer_code'];
const CODE = '4821737';

let readings: NameReadings;
beforeAll(async () => {
  readings = await testReadings();
});

function order(id: string, overrides: Partial<CandidateOrder> = {}): CandidateOrder {
  return {
    id,
    status: 'open',
    payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ',
    orderedAt: new Date('2026-11-21T00:00:00Z'),
    expiresAt: new Date('2026-12-05T00:00:00Z'),
    transferCode: null,
    ...overrides,
  };
}

/** The decision under `rules` with the real name dictionary, taught payers and context given. */
function decideWith(
  facts: DepositFacts,
  orders: CandidateOrder[],
  rules: readonly MatchingRule[],
  extras: { taught?: [string, string][]; context?: DecisionContext } = {},
) {
  const payers = new PayerMemory((extras.taught ?? []).map(([depositor, payer]) => ({ depositorKey: depositorKey(depositor), payerKey: payerKey(payer) })));
  return decideUnderRules(rules, readings, { facts, context: extras.context ?? {}, payers }, { orders, read: { allOpenOrdersRead: true } }, now);
}

describe('transfer codes', () => {
  test('when codes are made, then each is seven digits whose Damm check digit holds, and one changed digit or swapped pair is no code', () => {
    for (let i = 0; i < 200; i++) {
      const code = newTransferCode();
      expect(code).toMatch(/^[1-9][0-9]{6}$/);
      expect(isTransferCode(code)).toBe(true);
      const digits = [...code];
      for (let at = 0; at < 7; at++) {
        for (const other of '0123456789') {
          if (other === digits[at]) continue;
          expect(isTransferCode([...digits.slice(0, at), other, ...digits.slice(at + 1)].join(''))).toBe(false);
        }
        if (at < 6 && digits[at] !== digits[at + 1]) {
          const swapped = [...digits];
          [swapped[at], swapped[at + 1]] = [swapped[at + 1]!, swapped[at]!];
          expect(isTransferCode(swapped.join(''))).toBe(false);
        }
      }
    }
  });

  test.each([
    ['written before the name with a space', `${CODE} ﾔﾏﾀﾞ ﾀﾛｳ`, undefined, CODE],
    ['written before the name without a space', `${CODE}ﾔﾏﾀﾞ`, undefined, CODE],
    ['in full-width digits', `４８２１７３７ ﾔﾏﾀﾞ`, undefined, CODE],
    ["in the bank's 振込依頼人コード, zero-padded to ten digits", 'ﾔﾏﾀﾞ ﾀﾛｳ', `000${CODE}`, CODE],
    ['with a wrong check digit', '4821736 ﾔﾏﾀﾞ', undefined, undefined],
    ['as eight digits (a member number)', `${CODE}1 ﾔﾏﾀﾞ`, undefined, undefined],
    ['after the name', `ﾔﾏﾀﾞ ﾀﾛｳ ${CODE}`, undefined, undefined],
  ])('when a deposit carries a code %s (name %s, 振込依頼人コード %s), then the code read is %s', (_case, name, remitterCode, expected) => {
    expect(transferCodeOf(name, remitterCode)).toBe(expected);
  });

  test('when the deposit carries the code of a kanji order of its amount and the rule is on, then that order is paid whatever the name', () => {
    const decision = decideWith(
      { ...deposit, counterparty: `${CODE} ﾀﾅｶ ﾊﾅｺ`, transferCode: CODE },
      [order('ord_kanji', { payerName: '山田 太郎', transferCode: CODE })],
      ['transfer_code'],
    );

    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_kanji', reason: 'rule:transfer_code' });
    expect(decision.explanation.transfer_code).toEqual({ code: CODE, order_id: 'ord_kanji' });
  });

  test('when the code names one order and the name fits another too, then the code decides: the payer wrote which one', () => {
    const decision = decideWith(
      { ...deposit, counterparty: `${CODE} ﾔﾏﾀﾞ ﾀﾛｳ`, transferCode: CODE },
      [order('ord_a', { transferCode: CODE }), order('ord_b')],
      EVERY_RULE,
    );

    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_a', reason: 'rule:transfer_code' });
    expect(decision.explanation.candidates.map((c) => [c.order_id, c.not_chosen_because])).toEqual([
      ['ord_a', null],
      ['ord_b', 'transfer_code_names_another_order'],
    ]);
  });

  test("when the code's order fits no name but another order fits, then a person decides: the code may be copied from another order", () => {
    const decision = decideWith(
      { ...deposit, counterparty: `${CODE} ﾔﾏﾀﾞ ﾀﾛｳ`, transferCode: CODE },
      [order('ord_coded', { payerName: 'ｽｽﾞｷ ｲﾁﾛｳ', transferCode: CODE }), order('ord_named')],
      EVERY_RULE,
    );

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_coded', 'ord_named'] });
    expect(decision.explanation.reason).toBe('transfer_code_name_differs');
  });

  test('when the rule is off, then a code names a rival but never pays: a name fitting another order is held', () => {
    const decision = decideWith(
      { ...deposit, counterparty: `${CODE} ﾔﾏﾀﾞ ﾀﾛｳ`, transferCode: CODE },
      [order('ord_coded', { payerName: 'ｽｽﾞｷ', transferCode: CODE }), order('ord_named')],
      ['decorated'],
    );

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_named', 'ord_coded'] });
    expect(decision.explanation.candidates.find((c) => c.order_id === 'ord_coded')?.would_fit).toBe('rule:transfer_code');
  });

  test('when the code names an open order of another amount, then held and explained, with the order as a near miss', () => {
    const decision = decideWith({ ...deposit, amount: 4670, counterparty: `${CODE} ｽｽﾞｷ`, transferCode: CODE }, [order('ord_same_amount')], EVERY_RULE, {
      context: {
        codeOrder: { id: 'ord_coded', status: 'open', amount: 5000, payerName: 'ｽｽﾞｷ' },
        nearAmountOrders: [{ id: 'ord_coded', status: 'open', amount: 5000, payerName: 'ｽｽﾞｷ' }],
      },
    });

    expect(decision).toMatchObject({ outcome: 'held' });
    expect(decision.explanation).toMatchObject({
      reason: 'transfer_code_amount_differs',
      transfer_code: { code: CODE, order_id: 'ord_coded' },
      near_misses: [{ order_id: 'ord_coded', amount_difference: -330, likely: 'transfer_fee', fit: 'rule:transfer_code' }],
    });
  });

  test('when the code names a paid order, then held as a late or second payment, never paid to another order', () => {
    const decision = decideWith({ ...deposit, counterparty: `${CODE} ﾔﾏﾀﾞ ﾀﾛｳ`, transferCode: CODE }, [order('ord_other')], EVERY_RULE, {
      context: { codeOrder: { id: 'ord_paid', status: 'paid', amount: 5000, payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ' } },
    });

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_other'] });
    expect(decision.explanation).toMatchObject({ reason: 'transfer_code_order_not_open', transfer_code: { order_id: 'ord_paid' } });
  });

  test('when the code is of an expired order of the amount, then held, not paid to the open one the name fits', () => {
    const decision = decideWith(
      { ...deposit, counterparty: `${CODE} ﾔﾏﾀﾞ ﾀﾛｳ`, transferCode: CODE },
      [order('ord_expired', { status: 'expired', transferCode: CODE }), order('ord_open')],
      EVERY_RULE,
    );

    expect(decision.outcome).toBe('held');
    expect(decision.explanation.reason).toBe('transfer_code_order_not_open');
  });
});

describe('learned payers', () => {
  const mother = 'ﾔﾏﾀﾞ ﾊﾅｺ';

  test("when a person taught that a mother's name pays for her son's orders, then her deposit pays his open order of its amount", () => {
    const decision = decideWith(
      { ...deposit, counterparty: mother },
      [order('ord_son', { payerName: 'ヤマダ タロウ' }), order('ord_other', { payerName: 'ｽｽﾞｷ' })],
      EVERY_RULE,
      {
        taught: [[mother, 'ヤマダ タロウ']],
      },
    );

    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_son', reason: 'rule:learned_payer' });
  });

  test('when a taught name carries a transfer code or sender digits, then it is still the one taught', () => {
    const decision = decideWith({ ...deposit, counterparty: `0012345678 ${mother}` }, [order('ord_son', { payerName: 'ヤマダ タロウ' })], EVERY_RULE, {
      taught: [[mother, 'ヤマダ タロウ']],
    });

    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_son', reason: 'rule:learned_payer' });
  });

  test('when the rule is off, then the taught payer is a rival but pays nothing', () => {
    const decision = decideWith({ ...deposit, counterparty: mother }, [order('ord_son', { payerName: 'ヤマダ タロウ' })], ['kana_width'], {
      taught: [[mother, 'ヤマダ タロウ']],
    });

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_son'] });
    expect(decision.explanation.candidates[0]).toMatchObject({ fit: null, would_fit: 'rule:learned_payer' });
  });

  test('when the taught name also fits another open order of the amount by name, then held: two stories', () => {
    const decision = decideWith(
      { ...deposit, counterparty: mother },
      [order('ord_son', { payerName: 'ヤマダ タロウ' }), order('ord_hers', { payerName: mother })],
      EVERY_RULE,
      {
        taught: [[mother, 'ヤマダ タロウ']],
      },
    );

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_hers', 'ord_son'] });
    expect(decision.explanation.reason).toBe('several_orders_fit');
  });

  test('when the name was taught for two payers with open orders of the amount, then held', () => {
    const decision = decideWith(
      { ...deposit, counterparty: mother },
      [order('ord_son', { payerName: 'ヤマダ タロウ' }), order('ord_daughter', { payerName: 'ヤマダ ハナエ' })],
      EVERY_RULE,
      {
        taught: [
          [mother, 'ヤマダ タロウ'],
          [mother, 'ヤマダ ハナエ'],
        ],
      },
    );

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_son', 'ord_daughter'] });
  });

  test('when the son has two open orders of the amount, then held with both', () => {
    const decision = decideWith(
      { ...deposit, counterparty: mother },
      [order('ord_1', { payerName: 'ヤマダ タロウ' }), order('ord_2', { payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ' })],
      EVERY_RULE,
      {
        taught: [[mother, 'ヤマダ タロウ']],
      },
    );

    expect(decision.outcome).toBe('held');
  });
});

describe('kanji orders as rivals', () => {
  test('when a deposit from ｺﾞﾄｳ ｼﾞﾛｳ fits ゴトウ ジロウ and an order taken as 後藤 次郎 has its amount, then held: the kanji name reads the same', () => {
    const decision = decideWith(
      { ...deposit, counterparty: 'ｺﾞﾄｳ ｼﾞﾛｳ' },
      [order('ord_kana', { payerName: 'ゴトウ ジロウ' }), order('ord_kanji', { payerName: '後藤 次郎' })],
      EVERY_RULE,
    );

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_kana', 'ord_kanji'] });
    expect(decision.explanation.reason).toBe('several_orders_fit');
    expect(decision.explanation.candidates.find((c) => c.order_id === 'ord_kanji')).toMatchObject({ fit: null, possible_reading: true });
  });

  test.each([
    ['written without a space', '後藤次郎'],
    ['a rarer reading of the family name (東海林, ショウジ)', '東海林 次郎'],
    ['a given name the dictionary does not know', '後藤 𠮷'],
  ])('when the kanji order is %s, then it is still a rival when it could be read as the deposit', (_case, payerName) => {
    const depositor = payerName.startsWith('東海林') ? 'ｼﾖｳｼﾞ ｼﾞﾛｳ' : 'ｺﾞﾄｳ ｼﾞﾛｳ';
    const decision = decideWith(
      { ...deposit, counterparty: depositor },
      [order('ord_kana', { payerName: depositor }), order('ord_kanji', { payerName })],
      EVERY_RULE,
    );

    expect(decision.outcome).toBe('held');
  });

  test('when no reading of the kanji order gives the deposit name, then it is no rival and the name that fits is paid', () => {
    const decision = decideWith(
      { ...deposit, counterparty: 'ｺﾞﾄｳ ｼﾞﾛｳ' },
      [order('ord_kana', { payerName: 'ゴトウ ジロウ' }), order('ord_kanji', { payerName: '佐藤 花子' })],
      EVERY_RULE,
    );

    expect(decision).toMatchObject({ outcome: 'confirmed', orderId: 'ord_kana' });
  });

  test('when only the kanji order could be read as the deposit, then it is held for a person, never paid by its reading', () => {
    const decision = decideWith({ ...deposit, counterparty: 'ｺﾞﾄｳ ｼﾞﾛｳ' }, [order('ord_kanji', { payerName: '後藤 次郎' })], EVERY_RULE);

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_kanji'] });
    expect(decision.explanation.reason).toBe('no_name_fits');
  });
});

describe('the money itself', () => {
  test('when the deposit repeats a stored one (same account, amount, name and day), then held as a possible duplicate naming it, even with one fitting order', () => {
    const decision = decideWith({ ...deposit, duplicateOf: 'txn_first' }, [order('ord_a')], EVERY_RULE);

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: ['ord_a'] });
    expect(decision.explanation).toMatchObject({ reason: 'possible_duplicate', duplicate_of: 'txn_first' });
  });

  test('when a possible duplicate has no order of its amount, then it is held all the same: a late order must not pay it', () => {
    const decision = decideWith({ ...deposit, duplicateOf: 'txn_first' }, [], EVERY_RULE);

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: [] });
  });

  test('when the bank marked the deposit as a reversal, then it is held with no candidate, whatever fits', () => {
    const decision = decideWith({ ...deposit, bankReversal: true, transferCode: CODE }, [order('ord_a', { transferCode: CODE })], EVERY_RULE);

    expect(decision).toMatchObject({ outcome: 'held', candidateOrderIds: [] });
    expect(decision.explanation.reason).toBe('bank_reversal');
    expect(decision.explanation.candidates[0]?.not_chosen_because).toBe('bank_reversal');
  });
});

describe('near misses', () => {
  test.each([
    [-330, 5000, 'transfer_fee'],
    [-880, 30000, 'transfer_fee'],
    [-1100, 30000, 'transfer_fee'],
    [-100, 5000, 'small_difference'],
    [200, 5000, 'small_difference'],
    [-100, 1000, 'small_difference'],
    [-300, 1000, undefined],
    [-330, 500, undefined],
    [-1500, 30000, undefined],
    [-30, 300, 'small_difference'],
    [-50, 100, undefined],
  ] as const)('when the deposit differs from the order by %i on %i, then it is %s', (difference, orderAmount, kind) => {
    expect(nearMissKind(difference, orderAmount)).toBe(kind);
  });

  test('when no order has the amount but one of the name is short by a fee, then unmatched with that near miss, and nothing confirmed', () => {
    const decision = decideWith({ ...deposit, amount: 4670 }, [], EVERY_RULE, {
      context: {
        nearAmountOrders: [
          { id: 'ord_0000000000000fee', status: 'open', amount: 5000, payerName: 'ヤマダ タロウ' },
          { id: 'ord_stranger', status: 'open', amount: 5000, payerName: 'ｽｽﾞｷ' },
          { id: 'ord_far', status: 'open', amount: 9000, payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ' },
        ],
      },
    });

    expect(decision.outcome).toBe('unmatched');
    expect(decision.explanation.near_misses).toEqual([
      { order_id: 'ord_0000000000000fee', amount_difference: -330, likely: 'transfer_fee', fit: 'rule:kana_width' },
    ]);
    expect(() => Decision.parse(decision.explanation)).not.toThrow();
  });

  test('when a deposit is confirmed, then it lists no near misses', () => {
    const decision = decide(deposit, [order('ord_a')], nameMatcher([]), now, undefined, {
      nearAmountOrders: [{ id: 'ord_near', status: 'open', amount: 5100, payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ' }],
    });

    expect(decision.outcome).toBe('confirmed');
    expect(decision.explanation.near_misses).toBeUndefined();
  });
});
