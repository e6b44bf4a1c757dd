import { NAME_RULES, normaliseName, type MatchingRule } from '@pmatch/contracts';
import fc from 'fast-check';
import { decide, type CandidateOrder, type DepositFacts } from '../src/domain/decide';
import { nameMatcher } from '../src/domain/names/matcher';
import { kana_width } from '../src/domain/names/rules';
import { NAME_CORPUS } from './fixtures/names-corpus';
import { CORPUS_NAMES, MINUTE, OCCURRED_AT, amount, nearbyOrder, placed } from './support/scenarios';

const RUNS = { numRuns: 2000 };
/** The fixed seed of the one test that checks what the generator reaches (see that test). */
const GENERATOR_REACH_SEED = 20261123;

/** Kana in every width and size, dashes, spaces, brackets and the marks and compatibility characters that NFKC recombines (㈱, ㌀, ´). */
const KANA_ALPHABET = [
  ...'ｱｶﾞｷﾞｸｹｺﾊﾟﾎﾟｧｯｬｮあいうゃっゐゝカガキャッヵーｰ-－―〜 \u3000\u200B()（）ｶﾕﾄｸﾋシヤ株式会社AaＢé1２\u3099\u309A\u309B\uFF9E\u0301\u00B4㈱㌀',
];
/** Any code point, mostly from the BMP where the scripts are (fast-check's 'binary' unit takes seconds to set up). */
const ANY_CHARACTER = fc
  .oneof({ arbitrary: fc.integer({ min: 0, max: 0xffff }), weight: 4 }, { arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }), weight: 1 })
  .map((codePoint) => String.fromCodePoint(codePoint));

const rules = fc.subarray([...NAME_RULES]);

/** A stored order as the data layer sees it, before it picks the deposit's amount candidates. */
interface StoredOrder extends CandidateOrder {
  bankAccountId: string;
  amount: number;
  storedStatus: 'open' | 'expired' | 'paid' | 'canceled';
}

interface Scenario {
  deposit: DepositFacts & { bankAccountId: string };
  stored: StoredOrder[];
  now: Date;
}

/**
 * Deposits and stored orders that collide often: two accounts, three amounts, names from the corpus
 * (a depositor name and its own payer name fit under some rule set), orders placed before and
 * after the deposit, expiring before and after the decision.
 */
const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    caseIndex: fc.nat({ max: NAME_CORPUS.length - 1 }),
    bankAccountId: fc.constantFrom('ba_1', 'ba_2'),
    amount,
    nowAfterMinutes: fc.integer({ min: 0, max: 3 * 24 * 60 }),
    orders: fc.array(nearbyOrder, { maxLength: 8 }),
  })
  .map(({ caseIndex, bankAccountId, amount, nowAfterMinutes, orders }) => {
    const nameCase = NAME_CORPUS[caseIndex]!;
    const stored = orders.map((o, i): StoredOrder => {
      const { payerName, orderedAt, expiresAt } = placed(o, nameCase);
      const status = o.status === 'expired' ? 'expired' : 'open';
      const bankAccountId = o.onSecondAccount ? 'ba_2' : 'ba_1';
      return { id: `ord_${i}`, bankAccountId, amount: o.amount, storedStatus: o.status, status, payerName, orderedAt, expiresAt };
    });
    return {
      deposit: { bankAccountId, amount, counterparty: nameCase.depositor, occurredAt: new Date(OCCURRED_AT) },
      stored,
      now: new Date(OCCURRED_AT + nowAfterMinutes * MINUTE),
    };
  });

/** What findAmountCandidates reads: the deposit's account and amount, open or expired. */
function amountCandidates({ deposit, stored }: Scenario): CandidateOrder[] {
  return stored.filter(
    (o) => o.bankAccountId === deposit.bankAccountId && o.amount === deposit.amount && (o.storedStatus === 'open' || o.storedStatus === 'expired'),
  );
}

function decideFor(s: Scenario, enabled: readonly MatchingRule[], candidates = amountCandidates(s)) {
  return decide(s.deposit, candidates, nameMatcher(enabled), s.now);
}

const isEligible = (o: CandidateOrder, s: Scenario): boolean =>
  o.status === 'open' && o.orderedAt.getTime() <= s.deposit.occurredAt.getTime() && o.expiresAt.getTime() >= s.now.getTime();

describe('name normalisation (properties)', () => {
  test('when any string is normalised twice, then the second pass changes nothing', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: ANY_CHARACTER, maxLength: 30 }), fc.string({ unit: fc.constantFrom(...KANA_ALPHABET), maxLength: 30 })),
        (name) => {
          const once = normaliseName(name);
          expect(normaliseName(once)).toBe(once);
        },
      ),
      RUNS,
    );
  });

  test('when a name is compared with its own normal form, then kana_width fits (unless nothing is left)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...CORPUS_NAMES), fc.string({ unit: fc.constantFrom(...KANA_ALPHABET), maxLength: 30 })), (name) => {
        expect(kana_width(name, normaliseName(name))).toBe(normaliseName(name) !== '');
      }),
      RUNS,
    );
  });

  test('when a pair fits under any rule set, then it fits every rule set, under the rules or outside them', () => {
    const corpusPair = fc.constantFrom(...NAME_CORPUS.map((c) => ({ depositor: c.depositor, payer: c.payer })));
    fc.assert(
      fc.property(corpusPair, rules, ({ depositor, payer }, some) => {
        const everyRule = nameMatcher(NAME_RULES)(depositor, payer);
        expect(nameMatcher(some)(depositor, payer) !== undefined).toBe(everyRule !== undefined);
      }),
      RUNS,
    );
  });

  test('when more rules are enabled, then a pair never fits worse or stops fitting', () => {
    const pair = fc.record({ depositor: fc.constantFrom(...CORPUS_NAMES), payer: fc.constantFrom(...CORPUS_NAMES) });
    const corpusPair = fc.constantFrom(...NAME_CORPUS.map((c) => ({ depositor: c.depositor, payer: c.payer })));
    fc.assert(
      fc.property(fc.oneof(pair, corpusPair), rules, rules, ({ depositor, payer }, some, more) => {
        const fewer = nameMatcher(some)(depositor, payer);
        const wider = nameMatcher([...some, ...more])(depositor, payer);
        if (fewer !== undefined && fewer.outsideRules !== true) {
          expect(wider?.outsideRules).toBeUndefined();
          expect(wider?.rank).toBeLessThanOrEqual(fewer.rank);
        }
      }),
      RUNS,
    );
  });
});

describe('decide with nameMatcher (properties)', () => {
  test('when a deposit is confirmed, then the order has its account and amount, was placed before it, and is open and unexpired', () => {
    fc.assert(
      fc.property(scenario, rules, (s, enabled) => {
        const decision = decideFor(s, enabled);
        if (decision.outcome !== 'confirmed') return;
        const order = s.stored.find((o) => o.id === decision.orderId)!;
        expect(order.bankAccountId).toBe(s.deposit.bankAccountId);
        expect(order.amount).toBe(s.deposit.amount);
        expect(order.storedStatus).toBe('open');
        expect(order.orderedAt.getTime()).toBeLessThanOrEqual(s.deposit.occurredAt.getTime());
        expect(order.expiresAt.getTime()).toBeGreaterThanOrEqual(s.now.getTime());
      }),
      RUNS,
    );
  });

  test('when a decision confirmed an order, then enabling more rules confirms the same order or holds, never another order', () => {
    fc.assert(
      fc.property(scenario, rules, rules, (s, some, more) => {
        const before = decideFor(s, some);
        if (before.outcome !== 'confirmed') return;
        const after = decideFor(s, [...some, ...more]);
        if (after.outcome === 'confirmed') expect(after.orderId).toBe(before.orderId);
        else expect(after.outcome).toBe('held');
      }),
      RUNS,
    );
  });

  test('when a deposit is confirmed, then no other order placed before it fits at all, open or expired', () => {
    fc.assert(
      fc.property(scenario, rules, (s, enabled) => {
        const decision = decideFor(s, enabled);
        if (decision.outcome !== 'confirmed') return;
        const fit = nameMatcher(enabled);
        const others = amountCandidates(s).filter((o) => o.id !== decision.orderId && o.orderedAt.getTime() <= s.deposit.occurredAt.getTime());
        for (const other of others) expect(fit(s.deposit.counterparty, other.payerName)).toBeUndefined();
        expect(
          isEligible(
            amountCandidates(s).find((o) => o.id === decision.orderId)!,
            s,
          ),
        ).toBe(true);
      }),
      RUNS,
    );
  });

  test('when two candidates are identical but for their id, then neither is ever confirmed', () => {
    fc.assert(
      fc.property(scenario, rules, fc.nat(), (s, enabled, pick) => {
        const candidates = amountCandidates(s);
        if (candidates.length === 0) return;
        const original = candidates[pick % candidates.length]!;
        const twin = { ...original, id: 'ord_twin' };
        const decision = decideFor(s, enabled, [...candidates, twin]);
        if (decision.outcome === 'confirmed') expect([original.id, twin.id]).not.toContain(decision.orderId);
      }),
      RUNS,
    );
  });

  test('when the scenarios are generated, then they exercise confirmations by every rule as well as each kind of hold', () => {
    const outcomes = new Set<string>();
    fc.assert(
      fc.property(scenario, rules, (s, enabled) => {
        const decision = decideFor(s, enabled);
        outcomes.add(decision.outcome === 'confirmed' ? `confirmed:${decision.reason}` : `${decision.outcome}:${decision.explanation.reason}`);
      }),
      // A check of the generator's reach, not of `decide`: on a fixed sequence of cases, because
      // the rarest outcome (a confirmation by kana_width alone) is missing from some random runs of
      // 2,000 cases, which made this test fail now and then (CI, 2026-11-23).
      { ...RUNS, seed: GENERATOR_REACH_SEED },
    );
    expect([...outcomes]).toEqual(
      expect.arrayContaining([
        'confirmed:exact',
        ...NAME_RULES.map((rule) => `confirmed:rule:${rule}`),
        'held:several_orders_fit',
        'held:expired_order_fits',
        'held:only_expired_orders_fit',
        'held:no_name_fits',
        'unmatched:no_order_with_amount',
      ]),
    );
  });
});
