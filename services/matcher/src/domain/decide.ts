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
}

export interface Explanation {
  reason: string;
  candidates: CandidateExplanation[];
}

/** Exact fit: identical once leading and trailing whitespace is removed (spec rule 3). */
export const exactName: NameMatcher = (depositorName, payerName) =>
  depositorName.trim() === payerName.trim() ? { reason: 'exact', rank: 0, applied: [] } : undefined;

interface Assessed {
  order: CandidateOrder;
  fit: NameFit | undefined;
  excludedBecause: CandidateExplanation['excluded_because'];
}

type Fitting = Assessed & { fit: NameFit };

const fits = (a: Assessed): a is Fitting => a.fit !== undefined;

/**
 * The matching decision. `orders` are the orders on the deposit's account with its amount, open or
 * expired; this applies every other rule itself, so automatic matching, late orders and the seller
 * screen decide alike. Confirmed only when exactly one order fits by name and it is open and
 * unexpired; whenever a second order fits, at any rank, or the read stopped at its cap, a person
 * decides. Why: docs/decisions/0032-several-fitting-orders-are-held.md.
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

  const fitting = considered.filter(fits).sort((a, b) => a.fit.rank - b.fit.rank);
  if (!read.allOpenOrdersRead) return held('too_many_candidates', fitting.length > 0 ? fitting : considered, assessed);
  const open = fitting.filter((a) => a.excludedBecause === null);
  const expiredFitting = fitting.filter((a) => a.excludedBecause === 'expired');
  // Orders with the amount exist but none fits by name: every one is shown to a person.
  if (fitting.length === 0) return held('no_name_fits', considered, assessed);
  if (open.length === 0) return held('only_expired_orders_fit', expiredFitting, assessed);
  // An expired order that fits: its buyer most likely paid late.
  if (expiredFitting.length > 0) return held('expired_order_fits', [...expiredFitting, ...open], assessed);
  if (open.length > 1) return held('several_orders_fit', open, assessed);
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
    if (a.fit === undefined) return 'name_differs';
    if (a.order.id === outcome.chosen) return null;
    if (outcome.listed?.has(a.order.id) === true) return outcome.listedReason!;
    throw new Error(`order ${a.order.id} fits but was neither chosen nor listed`);
  };
  return {
    reason,
    candidates: assessed.map((a) => ({
      order_id: a.order.id,
      fit: a.fit?.reason ?? null,
      fit_rules: a.fit === undefined ? null : [...(a.fit.applied ?? [])],
      excluded_because: a.excludedBecause,
      not_chosen_because: notChosenBecause(a),
    })),
  };
}
