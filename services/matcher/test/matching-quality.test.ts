import { MATCHING_RULES, NAME_RULES } from '@pmatch/contracts';
import type { NameReadings } from '../src/domain/names/readings';
import { loadCorpus } from '../src/quality/corpus';
import { decideCase, evaluate, RULE_SETS } from '../src/quality/evaluate';
import { simulateStream } from '../src/quality/stream/simulate';
import { testReadings } from './support/readings';

const corpus = loadCorpus();
let readings: NameReadings;

beforeAll(async () => {
  readings = await testReadings();
});

describe('the matching-quality corpus', () => {
  test('when counted, then it holds at least 300 cases, at least 100 where no confirmation is right, each id once', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300);
    expect(corpus.filter((c) => c.right === null).length).toBeGreaterThanOrEqual(100);
    expect(new Set(corpus.map((c) => c.id)).size).toBe(corpus.length);
  });

  test('when a case names the right order, then that order is among its orders', () => {
    for (const c of corpus.filter((k) => k.right !== null)) expect(c.orders.map((o) => o.ref)).toContain(c.right);
  });

  test.each(RULE_SETS.map((set) => [set.name, set] as const))(
    'when the rule set is %s, then no deposit is confirmed to an order its depositor did not pay',
    (_name, set) => {
      expect(evaluate(corpus, set, readings).wrongConfirmations).toEqual([]);
    },
  );

  test('when every rule is enabled, then every fair case is confirmed to the right order', () => {
    const all = RULE_SETS.find((set) => set.name === 'all')!;
    expect(evaluate(corpus, all, readings)).toMatchObject({ confirmedRight: corpus.filter((c) => c.right !== null).length, wrongConfirmations: [] });
  });

  test.each(corpus.map((c) => [c.id, c] as const))('when every rule is enabled, then %s is decided as expected', (_id, c) => {
    const decision = decideCase(c, RULE_SETS.find((set) => set.name === 'all')!.rules, readings);
    const actual =
      decision.outcome === 'confirmed'
        ? { outcome: 'confirmed', order: decision.orderId, reason: decision.reason }
        : { outcome: decision.outcome, reason: decision.explanation.reason };
    expect(actual).toEqual(c.expected);
  });
});

describe("the shop's stream (pnpm quality stream)", () => {
  test.each([1, 2, 3])(
    'when seed %i runs four months with every rule on, then no month has a wrong confirmation, and from the third month on at least 90 percent of payable deposits are confirmed automatically',
    (seed) => {
      const figures = simulateStream({ seed, months: 4, rules: MATCHING_RULES, readings });

      expect(figures.map((f) => f.wrongConfirmations)).toEqual([0, 0, 0, 0]);
      for (const f of figures.slice(2)) expect(f.confirmedAutomatically / f.payable).toBeGreaterThanOrEqual(0.9);
      expect(figures.every((f) => f.payable > 200 && f.amountDiffers > 0 && f.notForAnyOrder > 0 && f.reportedTwice > 0)).toBe(true);
    },
  );

  test('when the stream runs with the four name rules alone, then no month has a wrong confirmation either', () => {
    expect(simulateStream({ seed: 1, months: 4, rules: NAME_RULES, readings }).map((f) => f.wrongConfirmations)).toEqual([0, 0, 0, 0]);
  });

  test('when kanji orders are not read as rivals (seed 7), then a namesake ordering in kanji lets a deposit pay the wrong order; read, it is held', () => {
    const wrong = (withReadings: NameReadings | undefined) =>
      simulateStream({ seed: 7, months: 4, rules: MATCHING_RULES, readings: withReadings }).reduce((sum, f) => sum + f.wrongConfirmations, 0);

    expect(wrong(undefined)).toBeGreaterThan(0);
    expect(wrong(readings)).toBe(0);
  });

  test('when the same seed runs twice, then the figures are the same', () => {
    const run = () => simulateStream({ seed: 7, months: 2, rules: MATCHING_RULES, readings });

    expect(run()).toEqual(run());
  });
});
