import { LIMITS, type NotChosenReason } from '@pmatch/contracts';

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

/**
 * Whether the orders given are every open order that may explain the deposit. A read that stopped
 * at its safety cap is not: the order that fits may be among those left unread.
 */
export interface CandidateRead {
  allOpenOrdersRead: boolean;
}
export const COMPLETE_READ: CandidateRead = { allOpenOrdersRead: true };

/** How a payer name fitted the depositor name; lower rank is a better fit. */
export interface NameFit {
  reason: string;
  rank: number;
  /** The rules whose changes the fit needed: [] for an exact fit. */
  applied?: readonly string[];
  /** Fits only under a rule the seller has not enabled: never confirmed, but a rival. */
  outsideRules?: boolean;
}

/** Compares a depositor name with a payer name; undefined when they do not fit. */
export type NameMatcher = (depositorName: string, payerName: string) => NameFit | undefined;

export type Decision =
  | {
      outcome: 'confirmed';
      orderId: string;
      /** The payer name the fit was found with: the payment is written only if the order still has it. */
      payerName: string;
      reason: string;
      explanation: Explanation;
    }
  | { outcome: 'held'; candidateOrderIds: string[]; explanation: Explanation }
  | { outcome: 'unmatched'; explanation: Explanation };

export interface CandidateExplanation {
  order_id: string;
  fit: string | null;
  fit_rules: string[] | null;
  excluded_because: 'expired' | 'ordered_after_deposit' | null;
  not_chosen_because: NotChosenReason | null;
  /** How the name would fit with every rule enabled, given only when the seller's rules do not fit it. */
  would_fit?: string;
}

export interface Explanation {
  reason: string;
  candidates: CandidateExplanation[];
}

/** Exact fit: identical once leading and trailing whitespace is removed (docs/guide.md "Matching rules"). */
export const exactName: NameMatcher = (depositorName, payerName) =>
  depositorName.trim() === payerName.trim() ? { reason: 'exact', rank: 0, applied: [] } : undefined;

interface Assessed {
  order: CandidateOrder;
  fit: NameFit | undefined;
  excludedBecause: CandidateExplanation['excluded_because'];
}

type Fitting = Assessed & { fit: NameFit };

const fits = (a: Assessed): a is Fitting => a.fit !== undefined;
const fitsByRules = (a: Fitting): boolean => a.fit.outsideRules !== true;

/**
 * The matching decision. `orders` are the orders on the deposit's account with its amount, open or
 * expired; this applies every other rule itself, so automatic matching, late orders and the seller
 * screen decide alike. Confirmed only when exactly one order fits by name under the seller's rules,
 * it is open and unexpired, and no other order would fit even with every rule enabled; otherwise a
 * person decides. Why: docs/decisions/0032-several-fitting-orders-are-held.md.
 */
export function decide(deposit: DepositFacts, orders: CandidateOrder[], fitName: NameMatcher, now: Date, read: CandidateRead = COMPLETE_READ): Decision {
  const assessed: Assessed[] = orders.map((order) => {
    const fit = fitName(deposit.counterparty, order.payerName);
    // A deposit earlier than ordered_at is never matched to that order.
    if (order.orderedAt.getTime() > deposit.occurredAt.getTime()) return { order, fit, excludedBecause: 'ordered_after_deposit' };
    const expired = order.status === 'expired' || order.expiresAt.getTime() < now.getTime();
    return { order, fit, excludedBecause: expired ? 'expired' : null };
  });
  const considered = assessed.filter((a) => a.excludedBecause !== 'ordered_after_deposit');
  if (considered.length === 0) return { outcome: 'unmatched', explanation: explain('no_order_with_amount', assessed) };

  // Fits by the seller's rules first, best first; then the rivals that fit only under other rules.
  const fitting = considered.filter(fits).sort((a, b) => Number(!fitsByRules(a)) - Number(!fitsByRules(b)) || a.fit.rank - b.fit.rank);
  if (!read.allOpenOrdersRead) return held('too_many_candidates', fitting.length > 0 ? fitting : considered, assessed);
  const byRules = fitting.filter(fitsByRules);
  // Orders with the amount exist but none fits by name: every one is shown to a person.
  if (byRules.length === 0) return held('no_name_fits', considered, assessed);
  const open = byRules.filter((a) => a.excludedBecause === null);
  if (open.length === 0) return held('only_expired_orders_fit', fitting, assessed);
  // An expired order that fits: its buyer most likely paid late.
  if (fitting.some((a) => a.excludedBecause === 'expired')) return held('expired_order_fits', fitting, assessed);
  if (fitting.length > 1) return held('several_orders_fit', fitting, assessed);
  const only = open[0]!;
  return {
    outcome: 'confirmed',
    orderId: only.order.id,
    payerName: only.order.payerName,
    reason: only.fit.reason,
    explanation: explain(only.fit.reason, assessed, { chosen: only.order.id }),
  };
}

/**
 * A decision that would have confirmed, held instead for `reason` (a late order without
 * auto-confirmation): its order becomes the one candidate a person is shown.
 */
export function heldInstead(decision: Extract<Decision, { outcome: 'confirmed' }>, reason: NotChosenReason): Extract<Decision, { outcome: 'held' }> {
  return {
    outcome: 'held',
    candidateOrderIds: [decision.orderId],
    explanation: {
      reason,
      candidates: decision.explanation.candidates.map((c) => (c.order_id === decision.orderId ? { ...c, not_chosen_because: reason } : c)),
    },
  };
}

function held(reason: NotChosenReason | 'no_name_fits', candidates: Assessed[], assessed: Assessed[]): Decision {
  const ids = candidates.map((a) => a.order.id);
  const listedReason = reason === 'no_name_fits' ? 'name_differs' : reason;
  const explanation = explain(reason, assessed, { listed: new Set(ids), listedReason });
  return { outcome: 'held', candidateOrderIds: ids.slice(0, LIMITS.maxHeldCandidates), explanation };
}

/**
 * Every order read, with how its name fitted and why it is not the one (`not_chosen_because`): its
 * own facts first (placed after the deposit, a name that does not fit), then, for the orders a held
 * deposit lists, the decision's reason; an order the decision did not need to list is `expired`.
 */
function explain(
  reason: string,
  assessed: Assessed[],
  outcome: { chosen?: string; listed?: ReadonlySet<string>; listedReason?: NotChosenReason } = {},
): Explanation {
  const notChosenBecause = (a: Assessed): NotChosenReason | null => {
    if (a.excludedBecause === 'ordered_after_deposit') return 'ordered_after_deposit';
    if (a.order.id === outcome.chosen) return null;
    if (a.fit === undefined) return 'name_differs';
    if (outcome.listed?.has(a.order.id) === true) return outcome.listedReason!;
    throw new Error(`order ${a.order.id} fits but was neither chosen nor listed`);
  };
  return {
    reason,
    candidates: assessed.map((a) => {
      const byRules = a.fit !== undefined && a.fit.outsideRules !== true ? a.fit : undefined;
      const candidate: CandidateExplanation = {
        order_id: a.order.id,
        fit: byRules?.reason ?? null,
        fit_rules: byRules === undefined ? null : [...(byRules.applied ?? [])],
        excluded_because: a.excludedBecause,
        not_chosen_because: notChosenBecause(a),
      };
      if (a.fit?.outsideRules === true) candidate.would_fit = a.fit.reason;
      return candidate;
    }),
  };
}
