import { MATCHING_RULES, type MatchingRule } from '@pmatch/contracts';
import { exactName, type NameFit } from '../decide';
import { normaliseName } from './normalise';
import { fitsAfter, type NameChange } from './rules';

/** A fit and the rules whose changes it needed, for the decision's explanation. */
export interface ExplainedFit extends NameFit {
  /** Catalogue order; empty for `exact`, `['kana_width']` when normalising was enough. */
  applied: MatchingRule[];
}

/** A `NameMatcher` (decide.ts) that also says which rules made the names fit. */
export type ExplainingNameMatcher = (depositorName: string, payerName: string) => ExplainedFit | undefined;

interface Stage {
  rule: MatchingRule;
  rank: number;
  /** Each set of changes that may make the names fit at this stage, fewest changes first. */
  attempts: ReadonlySet<NameChange>[];
}

function subsets<T>(items: readonly T[]): T[][] {
  const all = items.reduce<T[][]>((acc, item) => [...acc, ...acc.map((s) => [...s, item])], [[]]);
  return all.sort((a, b) => a.length - b.length);
}

function catalogueOrder(rules: Iterable<MatchingRule>): MatchingRule[] {
  const given = new Set(rules);
  return MATCHING_RULES.filter((rule) => given.has(rule));
}

/**
 * The name comparison of DESIGN "Matching decision" for a seller's `matching_rules`: exact (trimmed,
 * identical; rank 0) always, then each enabled rule in catalogue order whatever the order given
 * (rank 1 + catalogue index, reason `rule:<name>`); the first that fits wins.
 *
 * Composition. Each rule on its own fits kana_width-equal names and names equal after its own
 * change (rules.ts), so the names a stage fits always include those kana_width fits: with only
 * `truncated` on, ヤマダタロウ and ヤマダタロウジ both fit ﾔﾏﾀﾞﾀﾛｳ at that rule and tie. When several are
 * enabled, a rule also fits with any of the EARLIER enabled rules' changes added, and the reason
 * names the rule that fitted (the latest one needed): `1234 ｶ)ﾔﾏﾀﾞ` fits `株式会社ヤマダ` as
 * `rule:decorated` when corporate_abbreviation and decorated are both on. The seller has switched
 * on each of those tolerances, and a deposit that needs two of them is common (sender code in front
 * of a corporate name; a long corporate name cut at 48). Trying every subset rather than all
 * earlier changes at once keeps rules monotone: enabling another rule never makes a pair fit later
 * or not at all (removing `カ)` before a cut would otherwise push a 7-character cut under 6).
 * A later rule's change is never added to an earlier one, so the rank keeps saying how far the
 * names were bent.
 */
export function nameMatcher(enabledRules: readonly MatchingRule[]): ExplainingNameMatcher {
  const enabled = catalogueOrder(enabledRules);
  const stages: Stage[] = enabled.map((rule) => {
    const earlierChanges = enabled.filter((r): r is NameChange => r !== 'kana_width' && MATCHING_RULES.indexOf(r) < MATCHING_RULES.indexOf(rule));
    const own: NameChange[] = rule === 'kana_width' ? [] : [rule];
    const withOwnChange = own.length === 0 ? [] : subsets(earlierChanges).map((changes) => new Set([...changes, ...own]));
    return { rule, rank: 1 + MATCHING_RULES.indexOf(rule), attempts: [new Set<NameChange>(), ...withOwnChange] };
  });

  return (depositorName, payerName) => {
    if (exactName(depositorName, payerName) !== undefined) return { reason: 'exact', rank: 0, applied: [] };
    if (stages.length === 0) return undefined;
    const depositor = normaliseName(depositorName);
    const payer = normaliseName(payerName);
    for (const stage of stages) {
      const changes = stage.attempts.find((attempt) => fitsAfter(attempt, depositor, payer));
      if (changes !== undefined) {
        const applied = changes.size === 0 ? ['kana_width' as const] : catalogueOrder(changes);
        return { reason: `rule:${stage.rule}`, rank: stage.rank, applied };
      }
    }
    return undefined;
  };
}
