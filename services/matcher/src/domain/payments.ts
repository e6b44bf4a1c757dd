import { AppError, LIMITS, type Payment } from '@pmatch/contracts';

/**
 * How a payment came about, as the order's `payment` shows it: `auto`/`auto` for the matcher's own
 * decision; for a person, who (`api_key:key_…`, `user:usr_…`) and from where (`api`, `dashboard`);
 * `shop`/`shop` for a shop platform's report.
 */
export interface PaymentSource {
  decidedBy: string;
  trigger: string;
  reason: string;
}

/** Who a person's command says decided; commands from before the console say neither and were the API's. */
export interface Decider {
  decided_by?: string | undefined;
  trigger: 'api' | 'dashboard' | 'shop';
}

export const AUTOMATIC = (reason: string): PaymentSource => ({ decidedBy: 'auto', trigger: 'auto', reason });

/** A payment a person decided (a match, mark-paid), or a shop platform reported. */
export function decidedBy(command: Decider, reason = 'manual'): PaymentSource {
  if (command.trigger === 'shop') return { decidedBy: 'shop', trigger: 'shop', reason };
  return { decidedBy: command.decided_by ?? command.trigger, trigger: command.trigger, reason };
}

export function depositPayment(
  deposit: { id: string; amount: number; counterparty: string; occurredAt: Date },
  source: PaymentSource,
  matchedAt: Date,
): Payment {
  return {
    transaction_id: deposit.id,
    amount: deposit.amount,
    counterparty: deposit.counterparty,
    occurred_at: deposit.occurredAt.toISOString(),
    matched_at: matchedAt.toISOString(),
    decided_by: source.decidedBy,
    trigger: source.trigger,
    reason: source.reason,
  };
}

/** A payment outside the bank account (mark-paid, a shop platform): there is no transaction. */
export function outsidePayment(order: { amount: number; payerName: string }, paidAt: Date, matchedAt: Date, source: PaymentSource): Payment {
  return {
    transaction_id: null,
    amount: order.amount,
    counterparty: order.payerName,
    occurred_at: paidAt.toISOString(),
    matched_at: matchedAt.toISOString(),
    decided_by: source.decidedBy,
    trigger: source.trigger,
    reason: source.reason,
  };
}

/**
 * A paid order may be reversed within 24 hours of its confirmation; later only from the seller
 * console (`dashboard`), and only with a reason, which is what makes the late reversal a
 * deliberate act rather than a slip.
 */
export function assertReversible(
  order: { status: string; payment: Payment | null },
  now: Date,
  request: { trigger: string; reason?: string | undefined },
): Payment {
  if (order.status !== 'paid' || order.payment === null) {
    throw new AppError('order_not_open', 'Only an order paid by a deposit can be reversed.');
  }
  const matchedAt = Date.parse(order.payment.matched_at);
  if (now.getTime() - matchedAt <= LIMITS.reversalWindowMs) return order.payment;
  if (request.trigger !== 'dashboard') {
    throw new AppError('reverse_window_passed', 'The payment was confirmed more than 24 hours ago; it can be reversed only on the seller screen.');
  }
  if (request.reason === undefined) {
    throw new AppError('parameter_missing', 'The payment was confirmed more than 24 hours ago: say why it is reversed.', { param: 'reason' });
  }
  return order.payment;
}

export interface MatchFacts {
  deposit: { bankAccountId: string; amount: number; occurredAt: Date; status: string; direction: string };
  order: { bankAccountId: string; amount: number; orderedAt: Date; status: string };
}

/**
 * The match operation (docs/guide.md "Deposits and decisions"): the order must be on the deposit's account with its
 * amount and not ordered after it, and still free. Account and amount are checked before whether
 * the order is taken, as the order state table in docs/guide.md orders them.
 */
export function assertMatchable({ deposit, order }: MatchFacts): void {
  if (deposit.direction !== 'deposit' || (deposit.status !== 'held' && deposit.status !== 'unmatched')) {
    throw new AppError('transaction_not_matchable', `A ${deposit.status} transaction cannot be matched; only held or unmatched deposits can.`);
  }
  if (order.bankAccountId !== deposit.bankAccountId || order.amount !== deposit.amount) {
    throw new AppError('transaction_not_matchable', 'The order is on another bank account or has another amount than the deposit.', {
      param: 'order_id',
    });
  }
  if (order.orderedAt.getTime() > deposit.occurredAt.getTime()) {
    throw new AppError('transaction_not_matchable', 'The deposit was made before the order was placed.', { param: 'order_id' });
  }
  if (order.status === 'paid' || order.status === 'paid_outside') {
    throw new AppError('order_taken', 'The order has already been paid.', { param: 'order_id' });
  }
  if (order.status === 'canceled') {
    throw new AppError('order_not_open', 'The order has been canceled.', { param: 'order_id' });
  }
}
