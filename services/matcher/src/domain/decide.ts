import { LIMITS, type NearMiss, type NotChosenReason, type OrderStatus } from '@pmatch/contracts';
import { nearMissKind } from './near-misses';

/** What the decision needs of a deposit. */
export interface DepositFacts {
  amount: number;
  counterparty: string;
  occurredAt: Date;
  /** The valid transfer code the deposit carries (`transferCodeOf`), if any. */
  transferCode?: string | undefined;
  /** A stored deposit this one repeats: same account, amount, name and day, another bank reference. */
  duplicateOf?: string | undefined;
  /** The bank marked the entry as the reversal of an earlier one: money coming back, not a payment. */
  bankReversal?: boolean | undefined;
}

/** What the decision needs of an order that has the deposit's account and amount. */
export interface CandidateOrder {
  id: string;
  status: 'open' | 'expired';
  payerName: string;
  orderedAt: Date;
  expiresAt: Date;
  transferCode?: string | null;
}

/** An order of the deposit's account whose amount differs from the deposit's: a near miss, or the order its code names. */
export interface OtherOrder {
  id: string;
  status: string;
  amount: number;
  payerName: string;
}

/**
 * Whether the orders given are every open order that may explain the deposit. A read that stopped
 * at its safety cap is not: the order that fits may be among those left unread.
 */
export interface CandidateRead {
  allOpenOrdersRead: boolean;
}
export const COMPLETE_READ: CandidateRead = { allOpenOrdersRead: true };

/** The dedicated transfer account a deposit went to (docs/decisions/0170-dedicated-transfer-accounts.md). */
export interface DedicatedAccountFacts {
  /** The buyer whose account it is for good (継続型); null while it is given per order. */
  customerReference: string | null;
  /** The order it was last given to, or its buyer's latest order; undefined when it never was. */
  lastOrder?: { id: string; status: string; amount: number } | undefined;
}

/** What else a decision may look at, beyond the orders of the deposit's amount. */
export interface DecisionContext {
  /** Set when the deposit went to a dedicated transfer account. */
  dedicatedAccount?: DedicatedAccountFacts | undefined;
  /** Whether the seller enabled `dedicated_account`: the account's one open order of the amount is then paid whatever the name. */
  dedicatedAccountRule?: boolean;
  /** Whether the seller enabled `transfer_code`: a code then confirms its order whatever the name. */
  transferCodeRule?: boolean;
  /** The order the deposit's transfer code names on its account, when it is not among the amount's orders. */
  codeOrder?: OtherOrder | undefined;
  /** Open orders of the account whose amounts are near the deposit's (never its own amount). */
  nearAmountOrders?: readonly OtherOrder[];
}

/** How a payer name fitted the depositor name; lower rank is a better fit. */
export interface NameFit {
  reason: string;
  rank: number;
  /** The rules whose changes the fit needed: [] for an exact fit. */
  applied?: readonly string[];
  /** Fits only under a rule the seller has not enabled: never confirmed, but a rival. */
  outsideRules?: boolean;
  /** The depositor name is a reading of a payer name in kanji: never confirmed, but a rival. */
  reading?: boolean;
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
  possible_reading?: true;
}

export interface Explanation {
  reason: string;
  candidates: CandidateExplanation[];
  duplicate_of?: string;
  transfer_code?: { code: string; order_id: string };
  dedicated_account?: { order_id: string | null; order_status: OrderStatus | null; customer_reference: string | null };
  near_misses?: NearMiss[];
}

/** Exact fit: identical once leading and trailing whitespace is removed (docs/guide.md "Matching rules"). */
export const exactName: NameMatcher = (depositorName, payerName) =>
  depositorName.trim() === payerName.trim() ? { reason: 'exact', rank: 0, applied: [] } : undefined;

/** A fit by the transfer code alone, when the seller has not enabled `transfer_code`: a rival, never a confirmation. */
const CODE_RIVAL: NameFit = { reason: 'rule:transfer_code', rank: 90, applied: ['transfer_code'], outsideRules: true };

interface Assessed {
  order: CandidateOrder;
  fit: NameFit | undefined;
  excludedBecause: CandidateExplanation['excluded_because'];
}

type Fitting = Assessed & { fit: NameFit };

const fits = (a: Assessed): a is Fitting => a.fit !== undefined;
const fitsByRules = (a: Fitting): boolean => a.fit.outsideRules !== true && a.fit.reading !== true;

/** What the deposit's transfer code says: nothing, its order among the candidates, or a problem a person must see. */
type CodeFinding =
  | { kind: 'none' }
  | { kind: 'fits'; code: string; candidate: Assessed }
  | { kind: 'problem'; code: string; orderId: string; reason: 'transfer_code_amount_differs' | 'transfer_code_order_not_open' };

/**
 * The matching decision. `orders` are the orders on the deposit's account with its amount, open or
 * expired; this applies every other rule itself, so automatic matching, late orders and the seller
 * screen decide alike. A bank's reversal and a possible duplicate are always held. A valid transfer
 * code of an open order of the amount confirms it when the seller enabled the rule, unless the name
 * fits only other orders; a code of another amount or of a closed order is held. Otherwise
 * confirmed only when exactly one order fits by name under the seller's rules, it is open and
 * unexpired, and no other order would fit under any rule or by a kanji reading
 * (docs/decisions/0032-several-fitting-orders-are-held.md). Held and unmatched decisions list near misses.
 */
export function decide(
  deposit: DepositFacts,
  orders: CandidateOrder[],
  fitName: NameMatcher,
  now: Date,
  read: CandidateRead = COMPLETE_READ,
  context: DecisionContext = {},
): Decision {
  const assessed: Assessed[] = orders.map((order) => {
    const fit = fitName(deposit.counterparty, order.payerName);
    // A deposit earlier than ordered_at is never matched to that order.
    if (order.orderedAt.getTime() > deposit.occurredAt.getTime()) return { order, fit, excludedBecause: 'ordered_after_deposit' };
    const expired = order.status === 'expired' || order.expiresAt.getTime() < now.getTime();
    return { order, fit, excludedBecause: expired ? 'expired' : null };
  });
  const code = codeFinding(deposit, assessed, context);
  if (code.kind === 'fits' && code.candidate.fit === undefined && context.transferCodeRule !== true) code.candidate.fit = CODE_RIVAL;
  const decision = decideOn(deposit, assessed, code, read, context);
  if (code.kind !== 'none') decision.explanation.transfer_code = { code: code.code, order_id: code.kind === 'fits' ? code.candidate.order.id : code.orderId };
  if (decision.outcome !== 'confirmed') decision.explanation.near_misses = nearMisses(deposit, fitName, code, context);
  return decision;
}

function decideOn(deposit: DepositFacts, assessed: Assessed[], code: CodeFinding, read: CandidateRead, context: DecisionContext): Decision {
  const considered = assessed.filter((a) => a.excludedBecause !== 'ordered_after_deposit');
  // Fits by the seller's rules first, best first; then the rivals that fit only otherwise.
  const fitting = considered.filter(fits).sort((a, b) => Number(!fitsByRules(a)) - Number(!fitsByRules(b)) || a.fit.rank - b.fit.rank);
  const shown = fitting.length > 0 ? fitting : considered;

  // What the bank says about the money comes first: neither is a buyer's payment to decide by name.
  if (deposit.bankReversal === true) return held('bank_reversal', [], assessed, { others: 'bank_reversal' });
  if (deposit.duplicateOf !== undefined) {
    const decision = held('possible_duplicate', shown, assessed);
    decision.explanation.duplicate_of = deposit.duplicateOf;
    return decision;
  }
  if (code.kind === 'problem') return held(code.reason, shown, assessed);
  if (context.dedicatedAccount !== undefined) {
    const byAccount = decideByDedicatedAccount(
      deposit,
      considered,
      assessed,
      context.dedicatedAccount,
      context.dedicatedAccountRule === true && read.allOpenOrdersRead,
    );
    if (byAccount !== undefined) return byAccount;
  }
  if (considered.length === 0) return { outcome: 'unmatched', explanation: explain('no_order_with_amount', assessed) };
  if (!read.allOpenOrdersRead) return held('too_many_candidates', shown, assessed);
  if (code.kind === 'fits' && context.transferCodeRule === true) return decideByCode(code.candidate, fitting, assessed);

  const byRules = fitting.filter(fitsByRules);
  // Orders with the amount exist but none fits by name: every one is shown to a person.
  if (byRules.length === 0) return held('no_name_fits', considered, assessed);
  const open = byRules.filter((a) => a.excludedBecause === null);
  if (open.length === 0) return held('only_expired_orders_fit', fitting, assessed);
  // An expired order that fits: its buyer most likely paid late.
  if (fitting.some((a) => a.excludedBecause === 'expired')) return held('expired_order_fits', fitting, assessed);
  if (fitting.length > 1) return held('several_orders_fit', fitting, assessed);
  return confirmed(open[0]!.order, open[0]!.fit.reason, assessed);
}

/**
 * The deposit carries the code of an open order of its amount, and the seller lets codes decide:
 * that order is paid, unless its name does not fit at all while another order's does (the payer
 * may have copied another order's code): then a person decides.
 */
function decideByCode(candidate: Assessed, fitting: Fitting[], assessed: Assessed[]): Decision {
  if (candidate.excludedBecause !== null) return held('transfer_code_order_not_open', [candidate], assessed);
  const others = fitting.filter((a) => a !== candidate && fitsByRules(a));
  if (candidate.fit === undefined && others.length > 0) return held('transfer_code_name_differs', [candidate, ...others], assessed);
  return confirmed(candidate.order, 'rule:transfer_code', assessed, 'transfer_code_names_another_order');
}

/**
 * A deposit into a dedicated account. With no open order of its amount there it is held and the
 * account's last order shown: when that order is open with another amount, as
 * `dedicated_account_amount_differs` (its buyer paid a wrong amount); otherwise (the order closed,
 * the account resting or never given) as `dedicated_account_order_closed` (its buyer paid late or
 * twice). No other order may take the money. With the rule enabled, the account's one open order
 * of the amount is paid whatever the name; two of one buyer are held. Otherwise (undefined) the
 * names decide as on any account.
 */
function decideByDedicatedAccount(
  deposit: DepositFacts,
  considered: Assessed[],
  assessed: Assessed[],
  facts: DedicatedAccountFacts,
  rule: boolean,
): Decision | undefined {
  const open = considered.filter((a) => a.excludedBecause === null);
  if (open.length === 0) {
    const last = facts.lastOrder;
    const amountDiffers = considered.length === 0 && last?.status === 'open' && last.amount !== deposit.amount;
    const decision = held(amountDiffers ? 'dedicated_account_amount_differs' : 'dedicated_account_order_closed', considered, assessed);
    decision.explanation.dedicated_account = {
      order_id: last?.id ?? null,
      order_status: (last?.status as OrderStatus | undefined) ?? null,
      customer_reference: facts.customerReference,
    };
    return decision;
  }
  if (!rule) return undefined;
  if (open.length > 1) return held('several_orders_fit', considered, assessed);
  return confirmed(open[0]!.order, 'rule:dedicated_account', assessed, 'expired');
}

function confirmed(order: CandidateOrder, reason: string, assessed: Assessed[], others?: NotChosenReason): Decision {
  return {
    outcome: 'confirmed',
    orderId: order.id,
    payerName: order.payerName,
    reason,
    explanation: explain(reason, assessed, { chosen: order.id, ...(others === undefined ? {} : { others }) }),
  };
}

function codeFinding(deposit: DepositFacts, assessed: Assessed[], context: DecisionContext): CodeFinding {
  const code = deposit.transferCode;
  if (code === undefined) return { kind: 'none' };
  const candidate = assessed.find((a) => a.order.transferCode === code);
  if (candidate !== undefined) {
    return candidate.excludedBecause === null
      ? { kind: 'fits', code, candidate }
      : { kind: 'problem', code, orderId: candidate.order.id, reason: 'transfer_code_order_not_open' };
  }
  const other = context.codeOrder;
  if (other === undefined) return { kind: 'none' };
  const reason = other.status === 'open' && other.amount !== deposit.amount ? 'transfer_code_amount_differs' : 'transfer_code_order_not_open';
  return { kind: 'problem', code, orderId: other.id, reason };
}

/**
 * Open orders of other amounts whose name fits (by any rule, enabled or not, or by a reading) or
 * whose transfer code the deposit carries, and whose difference is a transfer fee or small.
 */
function nearMisses(deposit: DepositFacts, fitName: NameMatcher, code: CodeFinding, context: DecisionContext): NearMiss[] {
  const misses: NearMiss[] = [];
  for (const order of context.nearAmountOrders ?? []) {
    if (order.status !== 'open') continue;
    const difference = deposit.amount - order.amount;
    const likely = nearMissKind(difference, order.amount);
    if (likely === undefined) continue;
    const byCode = code.kind === 'problem' && code.orderId === order.id;
    const fit = byCode ? CODE_RIVAL : fitName(deposit.counterparty, order.payerName);
    if (fit === undefined) continue;
    misses.push({ order_id: order.id, amount_difference: difference, likely, fit: fit.reading === true ? 'reading' : fit.reason });
  }
  return misses.sort((a, b) => Math.abs(a.amount_difference) - Math.abs(b.amount_difference)).slice(0, LIMITS.maxNearMisses);
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
      ...decision.explanation,
      reason,
      candidates: decision.explanation.candidates.map((c) => (c.order_id === decision.orderId ? { ...c, not_chosen_because: reason } : c)),
    },
  };
}

function held(
  reason: NotChosenReason | 'no_name_fits',
  candidates: Assessed[],
  assessed: Assessed[],
  outcome: { others?: NotChosenReason } = {},
): Extract<Decision, { outcome: 'held' }> {
  const ids = candidates.map((a) => a.order.id);
  const listedReason = reason === 'no_name_fits' ? 'name_differs' : reason;
  const explanation = explain(reason, assessed, { listed: new Set(ids), listedReason, ...outcome });
  return { outcome: 'held', candidateOrderIds: ids.slice(0, LIMITS.maxHeldCandidates), explanation };
}

/**
 * Every order read, with how its name fitted and why it is not the one (`not_chosen_because`): its
 * own facts first (placed after the deposit, a name that does not fit), then, for the orders a held
 * deposit lists, the decision's reason; a fitting order neither chosen nor listed says `others`.
 */
function explain(
  reason: string,
  assessed: Assessed[],
  outcome: { chosen?: string; listed?: ReadonlySet<string>; listedReason?: NotChosenReason; others?: NotChosenReason } = {},
): Explanation {
  const notChosenBecause = (a: Assessed): NotChosenReason | null => {
    if (a.excludedBecause === 'ordered_after_deposit') return 'ordered_after_deposit';
    if (a.order.id === outcome.chosen) return null;
    if (a.fit === undefined) return 'name_differs';
    if (outcome.listed?.has(a.order.id) === true) return outcome.listedReason!;
    if (outcome.others !== undefined) return outcome.others;
    throw new Error(`order ${a.order.id} fits but was neither chosen nor listed`);
  };
  return {
    reason,
    candidates: assessed.map((a) => {
      const byRules = a.fit !== undefined && fitsByRules(a as Fitting) ? a.fit : undefined;
      const candidate: CandidateExplanation = {
        order_id: a.order.id,
        fit: byRules?.reason ?? null,
        fit_rules: byRules === undefined ? null : [...(byRules.applied ?? [])],
        excluded_because: a.excludedBecause,
        not_chosen_because: notChosenBecause(a),
      };
      if (a.fit?.outsideRules === true) candidate.would_fit = a.fit.reason;
      if (a.fit?.reading === true) candidate.possible_reading = true;
      return candidate;
    }),
  };
}
