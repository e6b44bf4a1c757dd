import type { ServiceRuntime } from '@pmatch/platform';
import type { OrdersApiConfig } from '../config';
import { paymentLinkPageRouter } from '../http/payment-link-page';
import { paymentPageRouter } from '../http/payment-page';
import { underPath } from '../http/under-path';
import type { OrdersApiDeps } from '../use-cases/deps';
import { TOO_MANY_REFUSALS, type RefusalLimiter } from './limits';

/** The buyer's payment page under /pay, each address limited in the unknown tokens it may try. */
export function mountPaymentPages(runtime: ServiceRuntime, deps: OrdersApiDeps, refusals: RefusalLimiter): void {
  runtime.http.use('/pay', runtime.addressLimit({ name: 'payment-page', limiter: refusals, counts: [404], message: TOO_MANY_REFUSALS }));
  runtime.http.use(underPath('/pay', paymentPageRouter(deps)));
}

/** Payment links' pages under /link, where buyers make orders: unknown tokens and orders per address are limited. */
export function mountPaymentLinkPages(runtime: ServiceRuntime, deps: OrdersApiDeps, config: OrdersApiConfig, refusals: RefusalLimiter): void {
  runtime.http.use('/link', runtime.addressLimit({ name: 'payment-link', limiter: refusals, counts: [404], message: TOO_MANY_REFUSALS }));
  // Per buyer address: a burst of PAYMENT_LINK_ORDERS_PER_HOUR orders, refilled over the hour.
  const linkOrders = runtime.rateLimiter(config.PAYMENT_LINK_ORDERS_PER_HOUR / 3600, config.PAYMENT_LINK_ORDERS_PER_HOUR);
  runtime.http.use(underPath('/link', paymentLinkPageRouter(deps, { limiter: linkOrders, logger: runtime.logger })));
}
