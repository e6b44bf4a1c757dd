import { MATCHING_RULES, NAME_RULES, normaliseName, type MatchingRule, type NameRule } from '@pmatch/contracts';
import { exactName, type NameFit } from '../decide';
import type { PayerMemory } from './payer-memory';
import type { NameReadings } from './readings';
import { depositorName, fitsAfter, type DepositorName, type NameChange } from './rules';

/** A fit and the rules whose changes it needed, for the decision's explanation. */
export interface ExplainedFit extends NameFit {
  /** Catalogue order; empty for `exact`, `['kana_width']` when normalising was enough. */
  applied: MatchingRule[];
}

/** What a seller's rules may look at beyond the two names. */
export interface NameContext {
  /** The payers people taught the service on the deposit's account (`learned_payer`). */
  payers?: PayerMemory;
  /** Readings of kanji names: a kanji payer name the depositor name could be read as is a rival. */
  readings?: NameReadings;
}

/** A `NameMatcher` (decide.ts) that also says which rules made the names fit. */
export type ExplainingNameMatcher = (depositorName: string, payerName: string) => ExplainedFit | undefined;

interface Stage {
  rule: NameRule;
  rank: number;
  /** Each set of changes that may make the names fit at this stage, fewest changes first. */
  attempts: ReadonlySet<NameChange>[];
}

function subsets<T>(items: readonly T[]): T[][] {
  const all = items.reduce<T[][]>((acc, item) => [...acc, ...acc.map((s) => [...s, item])], [[]]);
  return all.sort((a, b) => a.length - b.length);
}

function catalogueOrder<R extends MatchingRule>(rules: Iterable<R>): R[] {
  const given = new Set<MatchingRule>(rules);
  return MATCHING_RULES.filter((rule): rule is R => given.has(rule));
}

const isNameRule = (rule: MatchingRule): rule is NameRule => (NAME_RULES as readonly string[]).includes(rule);

/** The stages of a rule set's name rules, in catalogue order, each with the change sets it may try. */
function stagesOf(rules: readonly MatchingRule[]): Stage[] {
  const enabled = catalogueOrder(rules.filter(isNameRule));
  return enabled.map((rule) => {
    const earlierChanges = enabled.filter((r): r is NameChange => r !== 'kana_width' && MATCHING_RULES.indexOf(r) < MATCHING_RULES.indexOf(rule));
    const own: NameChange[] = rule === 'kana_width' ? [] : [rule];
    const withOwnChange = own.length === 0 ? [] : subsets(earlierChanges).map((changes) => new Set([...changes, ...own]));
    return { rule, rank: 1 + MATCHING_RULES.indexOf(rule), attempts: [new Set<NameChange>(), ...withOwnChange] };
  });
}

function fitAt(stages: readonly Stage[], depositor: DepositorName, payer: string): ExplainedFit | undefined {
  for (const stage of stages) {
    const changes = stage.attempts.find((attempt) => fitsAfter(attempt, depositor, payer));
    if (changes !== undefined) {
      const applied = changes.size === 0 ? ['kana_width' as const] : catalogueOrder(changes);
      return { reason: `rule:${stage.rule}`, rank: stage.rank, applied };
    }
  }
  return undefined;
}

const EVERY_NAME_RULE = stagesOf(NAME_RULES);

const LEARNED: ExplainedFit = { reason: 'rule:learned_payer', rank: 1 + MATCHING_RULES.indexOf('learned_payer'), applied: ['learned_payer'] };
const READING: ExplainedFit = { reason: 'reading', rank: 100, applied: [], reading: true };

/**
 * The name comparison for a seller's `matching_rules`: exact (rank 0) always, then each enabled name
 * rule in catalogue order (rank 1 + catalogue index, reason `rule:<name>`); the first that fits wins.
 * A rule may also add the changes of EARLIER enabled rules (docs/decisions/0031-rules-combine-with-earlier-rules.md).
 * Then a payer a person taught for the depositor name (`rule:learned_payer`). A pair that fits only
 * under a rule the seller has not enabled comes back marked `outsideRules`, and a kanji payer name
 * the depositor name could be read as marked `reading`: never confirmed, but rivals that make a
 * deposit ambiguous (docs/decisions/0032-several-fitting-orders-are-held.md).
 */
export function nameMatcher(enabledRules: readonly MatchingRule[], context: NameContext = {}): ExplainingNameMatcher {
  const stages = stagesOf(enabledRules);
  const learns = enabledRules.includes('learned_payer');
  // decide() compares one depositor name with each candidate in turn: read it once.
  let last: { name: string; form: DepositorName } | undefined;
  const formOf = (name: string): DepositorName => {
    if (last?.name !== name) last = { name, form: depositorName(name) };
    return last.form;
  };

  return (depositorNameText, payerName) => {
    if (exactName(depositorNameText, payerName) !== undefined) return { reason: 'exact', rank: 0, applied: [] };
    const depositor = formOf(depositorNameText);
    const payer = normaliseName(payerName);
    const fit = fitAt(stages, depositor, payer);
    if (fit !== undefined) return fit;
    const taught = context.payers?.taught(depositorNameText, payerName) === true;
    if (taught && learns) return LEARNED;
    const outside = stages.length === EVERY_NAME_RULE.length ? undefined : fitAt(EVERY_NAME_RULE, depositor, payer);
    if (outside !== undefined) return { ...outside, outsideRules: true };
    if (taught) return { ...LEARNED, outsideRules: true };
    return context.readings?.couldRead(depositorNameText, payerName) === true ? READING : undefined;
  };
}
