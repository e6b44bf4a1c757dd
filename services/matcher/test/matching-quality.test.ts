import { loadCorpus } from '../src/quality/corpus';
import { decideCase, evaluate, RULE_SETS } from '../src/quality/evaluate';

const corpus = loadCorpus();

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
      expect(evaluate(corpus, set).wrongConfirmations).toEqual([]);
    },
  );

  test('when every rule is enabled, then every fair case is confirmed to the right order', () => {
    const all = RULE_SETS.find((set) => set.name === 'all')!;
    expect(evaluate(corpus, all)).toMatchObject({ confirmedRight: corpus.filter((c) => c.right !== null).length, wrongConfirmations: [] });
  });

  test.each(corpus.map((c) => [c.id, c] as const))('when every rule is enabled, then %s is decided as expected', (_id, c) => {
    const decision = decideCase(c, RULE_SETS.find((set) => set.name === 'all')!.rules);
    const actual =
      decision.outcome === 'confirmed'
        ? { outcome: 'confirmed', order: decision.orderId, reason: decision.reason }
        : { outcome: decision.outcome, reason: decision.explanation.reason };
    expect(actual).toEqual(c.expected);
  });
});
