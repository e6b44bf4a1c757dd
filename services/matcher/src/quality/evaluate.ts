import { NAME_RULES, type MatchingRule } from '@pmatch/contracts';
import { decide, type CandidateOrder, type Decision } from '../domain/decide';
import { nameMatcher } from '../domain/names/matcher';
import type { NameReadings } from '../domain/names/readings';
import type { QualityCase } from './corpus';

/** The rule sets measured: none, each name rule alone, and all four (the corpus holds names only: no taught payers, no codes). */
export const RULE_SETS: ReadonlyArray<{ name: string; rules: readonly MatchingRule[] }> = [
  { name: 'none', rules: [] },
  ...NAME_RULES.map((rule) => ({ name: rule, rules: [rule] })),
  { name: 'all', rules: NAME_RULES },
];

const ORDERED_AT = new Date('2026-11-26T00:00:00Z');
const EXPIRES_AT = new Date('2026-12-10T00:00:00Z');
const OCCURRED_AT = new Date('2026-11-27T01:00:00Z');
const NOW = new Date('2026-11-27T03:00:00Z');

/** The matcher's own decision for a case (kanji orders read as the matcher reads them): the orders all placed before the deposit, open unless marked expired. */
export function decideCase(c: QualityCase, rules: readonly MatchingRule[], readings: NameReadings): Decision {
  const orders: CandidateOrder[] = c.orders.map((o) => ({
    id: o.ref,
    status: o.expired === true ? 'expired' : 'open',
    payerName: o.payer_name,
    orderedAt: ORDERED_AT,
    expiresAt: EXPIRES_AT,
  }));
  return decide({ amount: 1, counterparty: c.deposit, occurredAt: OCCURRED_AT }, orders, nameMatcher(rules, { readings }), NOW);
}

export interface QualityReport {
  ruleSet: string;
  cases: number;
  /** Cases whose depositor paid one of the orders shown. */
  fair: number;
  /** Fair cases confirmed to the right order. */
  confirmedRight: number;
  /** Confirmations of an order the depositor did not pay, or of any order where none is right. */
  wrongConfirmations: string[];
  held: number;
  heldFair: number;
  unmatched: number;
}

export function evaluate(cases: readonly QualityCase[], ruleSet: { name: string; rules: readonly MatchingRule[] }, readings: NameReadings): QualityReport {
  const report: QualityReport = {
    ruleSet: ruleSet.name,
    cases: cases.length,
    fair: 0,
    confirmedRight: 0,
    wrongConfirmations: [],
    held: 0,
    heldFair: 0,
    unmatched: 0,
  };
  for (const c of cases) {
    const decision = decideCase(c, ruleSet.rules, readings);
    if (c.right !== null) report.fair += 1;
    if (decision.outcome === 'confirmed') {
      if (decision.orderId === c.right) report.confirmedRight += 1;
      else report.wrongConfirmations.push(c.id);
    } else if (decision.outcome === 'held') {
      report.held += 1;
      if (c.right !== null) report.heldFair += 1;
    } else {
      report.unmatched += 1;
    }
  }
  return report;
}
