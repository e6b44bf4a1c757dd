import { PAYMENT_TOKEN_PATTERN } from '@pmatch/contracts';
import type { PaymentPageBankAccount, PaymentPageOrder } from '../domain/payment-page';
import { findPaymentPageData } from '../data/payment-page';
import type { OrdersApiDeps } from './deps';

/** What the buyer's payment page shows of the order behind `token` at `now`, or null when no order has it. */
export async function showPaymentPage(
  deps: Pick<OrdersApiDeps, 'database' | 'clock'>,
  token: string,
): Promise<{ order: PaymentPageOrder; bankAccount: PaymentPageBankAccount; now: Date } | null> {
  // A malformed token cannot belong to an order, so it is turned away without a query.
  const data = PAYMENT_TOKEN_PATTERN.test(token) ? await findPaymentPageData(deps.database.prisma, token) : null;
  if (data === null) return null;
  return { ...data, now: deps.clock.now() };
}
