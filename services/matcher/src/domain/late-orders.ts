import { heldInstead, type Decision, type Explanation } from './decide';

export type LateOrderOutcome<D> =
  | { deposit: D; outcome: 'confirmed'; orderId: string; payerName: string; reason: string; explanation: Explanation }
  | { deposit: D; outcome: 'held'; candidateOrderIds: string[]; explanation: Explanation };

/**
 * What re-examined unmatched deposits become (docs/guide.md "Deposits and decisions"; "several fitting deposits
 * for one late order are all held"). A deposit that would confirm is confirmed only with
 * auto-confirmation on and no other re-examined deposit fitting the same order; otherwise held.
 * A deposit that is still unmatched stays as it is (it is left out).
 */
export function lateOrderOutcomes<D>(decisions: { deposit: D; decision: Decision }[], autoConfirm: boolean): LateOrderOutcome<D>[] {
  const confirmsPerOrder = new Map<string, number>();
  for (const { decision } of decisions) {
    if (decision.outcome === 'confirmed') confirmsPerOrder.set(decision.orderId, (confirmsPerOrder.get(decision.orderId) ?? 0) + 1);
  }
  const outcomes: LateOrderOutcome<D>[] = [];
  for (const { deposit, decision } of decisions) {
    if (decision.outcome === 'unmatched') continue;
    if (decision.outcome === 'held') {
      outcomes.push({ deposit, outcome: 'held', candidateOrderIds: decision.candidateOrderIds, explanation: decision.explanation });
    } else if (autoConfirm && confirmsPerOrder.get(decision.orderId) === 1) {
      const { orderId, payerName, reason, explanation } = decision;
      outcomes.push({ deposit, outcome: 'confirmed', orderId, payerName, reason, explanation });
    } else {
      const instead = heldInstead(decision, autoConfirm ? 'several_deposits_fit_late_order' : 'late_order');
      outcomes.push({ deposit, outcome: 'held', candidateOrderIds: instead.candidateOrderIds, explanation: instead.explanation });
    }
  }
  return outcomes;
}
