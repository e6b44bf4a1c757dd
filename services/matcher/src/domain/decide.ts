import { LIMITS } from '@pmatch/contracts';

/** What the decision needs of a deposit. */
export interface DepositFacts {
  amount: number;
  counterparty: string;
  occurredAt: Date;
}

/** What the decision needs of an order that has the deposit's account and amount. */
export interface CandidateOrder {
  id: string;
  status: 'open' | 'expired';
  payerName: string;
  orderedAt: Date;
  expiresAt: Date;
}

/** How a payer name fitted the depositor name; lower rank is a better fit. */
export interface NameFit {
  reason: string;
  rank: number;
  /** The rules whose changes the fit needed, when a rule fitted. */
  applied?: readonly string[];
}

/** Compares a depositor name with a payer name; undefined when they do not fit. */
export type NameMatcher = (depositorName: string, payerName: string) => NameFit | undefined;

export type Decision =
  | { outcome: 'confirmed'; orderId: string; reason: string; explanation: Explanation }
  | { outcome: 'held'; candidateOrderIds: string[]; explanation: Explanation }
  | { outcome: 'unmatched'; explanation: Explanation };

export interface CandidateExplanation {
  order_id: string;
  fit: string | null;
  fit_rules: string[] | null;
  excluded_because: 'expired' | 'ordered_after_deposit' | null;
}

export interface Explanation {
  reason: string;
  candidates: CandidateExplanation[];
}

/** Exact fit: identical once leading and trailing whitespace is removed (spec rule 3). */
export const exactName: NameMatcher = (depositorName, payerName) =>
  depositorName.trim() === payerName.trim() ? { reason: 'exact', rank: 0 } : undefined;

/**
 * The matching decision of DESIGN "Matching decision". `orders` are the orders on the deposit's
 * account with the deposit's amount that are open or expired; this function applies every other
 * rule itself, so automatic matching, late orders and the seller screen decide alike.
 */
export function decide(deposit: DepositFacts, orders: CandidateOrder[], fitName: NameMatcher, now: Date): Decision {
  const eligible: { order: CandidateOrder; fit: NameFit | undefined }[] = [];
  const explained: CandidateExplanation[] = [];
  for (const order of orders) {
    const fit = fitName(deposit.counterparty, order.payerName);
    if (order.orderedAt.getTime() > deposit.occurredAt.getTime()) {
      // Spec rule 4: a deposit earlier than ordered_at is never matched to that order.
      explained.push({ order_id: order.id, ...fitOf(fit), excluded_because: 'ordered_after_deposit' });
      continue;
    }
    const expired = order.status === 'expired' || order.expiresAt.getTime() < now.getTime();
    explained.push({ order_id: order.id, ...fitOf(fit), excluded_because: expired ? 'expired' : null });
    if (!expired) eligible.push({ order, fit });
  }
  const considered = explained.filter((c) => c.excluded_because !== 'ordered_after_deposit').map((c) => c.order_id);
  if (considered.length === 0) {
    return { outcome: 'unmatched', explanation: { reason: 'no_order_with_amount', candidates: explained } };
  }
  const fitting = eligible.filter((e): e is { order: CandidateOrder; fit: NameFit } => e.fit !== undefined);
  if (fitting.length > 0) {
    const bestRank = Math.min(...fitting.map((e) => e.fit.rank));
    const best = fitting.filter((e) => e.fit.rank === bestRank);
    if (best.length === 1) {
      const only = best[0]!;
      return {
        outcome: 'confirmed',
        orderId: only.order.id,
        reason: only.fit.reason,
        explanation: { reason: only.fit.reason, candidates: explained },
      };
    }
    return {
      outcome: 'held',
      candidateOrderIds: best.map((e) => e.order.id).slice(0, LIMITS.maxHeldCandidates),
      explanation: { reason: 'several_orders_fit', candidates: explained },
    };
  }
  // Orders with the amount exist but none fits by name, or only expired ones do: a person decides,
  // shown the expired orders that fit if there are any, else every order with the amount.
  const expiredFitting = explained.filter((c) => c.excluded_because === 'expired' && c.fit !== null).map((c) => c.order_id);
  return {
    outcome: 'held',
    candidateOrderIds: (expiredFitting.length > 0 ? expiredFitting : considered).slice(0, LIMITS.maxHeldCandidates),
    explanation: { reason: expiredFitting.length > 0 ? 'only_expired_orders_fit' : 'no_name_fits', candidates: explained },
  };
}

function fitOf(fit: NameFit | undefined): Pick<CandidateExplanation, 'fit' | 'fit_rules'> {
  return { fit: fit?.reason ?? null, fit_rules: fit?.applied === undefined ? null : [...fit.applied] };
}
