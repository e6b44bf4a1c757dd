import { PAYMENT_TOKEN_PATTERN } from '@pmatch/contracts';
import { renderPaymentPage } from '../domain/payment-page';
import type { PageLanguage } from '../domain/payment-page-texts';
import { findPaymentPageData } from '../data/payment-page';
import type { OrdersApiDeps } from './deps';

/** The buyer's payment page for the order behind `token`, or null when no order has it. */
export async function showPaymentPage(deps: Pick<OrdersApiDeps, 'database' | 'clock'>, token: string, language: PageLanguage): Promise<string | null> {
  // A malformed token cannot belong to an order, so it is turned away without a query.
  const data = PAYMENT_TOKEN_PATTERN.test(token) ? await findPaymentPageData(deps.database.prisma, token) : null;
  if (data === null) return null;
  return renderPaymentPage({ ...data, language, now: deps.clock.now() });
}
