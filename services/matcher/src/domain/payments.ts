import { AppError, LIMITS, type Payment } from '@pmatch/contracts';

/** How a payment came about, as the order's `payment` shows it. */
export interface PaymentSource {
  decidedBy: 'auto' | 'api' | 'shop';
  trigger: 'auto' | 'match_operation' | 'mark_paid' | 'shop';
  reason: string;
}

export const AUTOMATIC = (reason: string): PaymentSource => ({ decidedBy: 'auto', trigger: 'auto', reason });
export const MATCH_OPERATION: PaymentSource = { decidedBy: 'api', trigger: 'match_operation', reason: 'manual' };

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
export function outsidePayment(
  order: { amount: number; payerName: string },
  paidAt: Date,
  matchedAt: Date,
  trigger: 'api' | 'shop',
): Payment {
  return {
    transaction_id: null,
    amount: order.amount,
    counterparty: order.payerName,
    occurred_at: paidAt.toISOString(),
    matched_at: matchedAt.toISOString(),
    decided_by: trigger,
    trigger: trigger === 'api' ? 'mark_paid' : 'shop',
    reason: 'manual',
  };
}

/** Spec: a paid order may be reversed through the API within 24 hours of confirmation. */
export function assertReversible(order: { status: string; payment: Payment | null }, now: Date): Payment {
  if (order.status !== 'paid' || order.payment === null) {
    throw new AppError('order_not_open', 'Only an order paid by a deposit can be reversed.');
  }
  const matchedAt = Date.parse(order.payment.matched_at);
  if (now.getTime() - matchedAt > LIMITS.reversalWindowMs) {
    throw new AppError(
      'reverse_window_passed',
      'The payment was confirmed more than 24 hours ago; it can be reversed only on the seller screen.',
    );
  }
  return order.payment;
}

export interface MatchFacts {
  deposit: { bankAccountId: string; amount: number; occurredAt: Date; status: string; direction: string };
  order: { bankAccountId: string; amount: number; orderedAt: Date; status: string };
}

/**
 * The match operation (spec endpoint rule 8): the order must be on the deposit's account with its
 * amount and not ordered after it, and still free. Account and amount are checked before whether
 * the order is taken, as the spec's table orders them.
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
