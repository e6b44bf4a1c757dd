import type { MatchingRule } from '@pmatch/contracts';
import { decide, type CandidateOrder, type CandidateRead, type Decision, type DecisionContext, type DepositFacts } from './decide';
import { nameMatcher } from './names/matcher';
import type { PayerMemory } from './names/payer-memory';
import type { NameReadings } from './names/readings';

/** What deciding a deposit needs beyond its amount candidates: facts about the money, orders of other amounts, taught payers. */
export interface DecisionInputs {
  facts: DepositFacts;
  context: DecisionContext;
  payers: PayerMemory;
}

/**
 * `decide` under a seller's enabled `matching_rules`: names compared by those rules, the payers
 * people taught and the readings of kanji names; transfer codes decide when `transfer_code` is on.
 */
export function decideUnderRules(
  rules: readonly MatchingRule[],
  readings: NameReadings | undefined,
  inputs: DecisionInputs,
  candidates: { orders: CandidateOrder[]; read: CandidateRead },
  now: Date,
): Decision {
  const fitName = nameMatcher(rules, { payers: inputs.payers, ...(readings === undefined ? {} : { readings }) });
  return decide(inputs.facts, candidates.orders, fitName, now, candidates.read, {
    ...inputs.context,
    transferCodeRule: rules.includes('transfer_code'),
    dedicatedAccountRule: rules.includes('dedicated_account'),
  });
}
