import { buildOpenApiDocument } from '@pmatch/contracts';
import { jsonBodies, type Clock, type ServiceRuntime } from '@pmatch/platform';
import type { OrdersApiConfig } from '../config';
import { markKeyUsed } from '../data/keys';
import { ApiKeys, authenticateApiKey, recheckCachedKey } from '../http/api-key-auth';
import { bankAccountsRouter } from '../http/bank-accounts';
import { eventsRouter } from '../http/events';
import { createsOrderWithoutIdempotencyKey, ordersRouter } from '../http/orders';
import { paymentLinksRouter } from '../http/payment-links';
import { rateLimit } from '../http/rate-limit';
import { referenceDocsRouter } from '../http/reference-docs';
import { settingsRouter } from '../http/settings';
import { testDepositsRouter } from '../http/test-deposits';
import { transactionsRouter } from '../http/transactions';
import { payerAliasesRouter } from '../http/payer-aliases';
import { underPath } from '../http/under-path';
import { webhookEndpointsRouter } from '../http/webhook-endpoints';
import type { OrdersApiDeps } from '../use-cases/deps';
import { TOO_MANY_REFUSALS, type RefusalLimiter } from './limits';

/** The API's reference: the OpenAPI document and its rendered page, which hold nothing of a merchant's and need no key. */
export function mountReference(runtime: ServiceRuntime, config: OrdersApiConfig): void {
  const openApiDocument = buildOpenApiDocument(config.PUBLIC_BASE_URL);
  runtime.http.get('/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  runtime.http.use(underPath('/docs', referenceDocsRouter()));
}

/**
 * The REST API under /v1. The address and the key first: a request without a valid key is refused
 * before its body is read or parsed; then the key's rate limit; then the routes.
 */
export function mountApi(runtime: ServiceRuntime, deps: OrdersApiDeps, config: OrdersApiConfig, clock: Clock, refusals: RefusalLimiter): void {
  const { http, database, logger } = runtime;
  const perKey = runtime.rateLimiter(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST);
  const keys = new ApiKeys(database.sql, runtime.metrics, (keyId, at) => markKeyUsed(database.prisma, keyId, at), clock, logger);
  http.use(
    '/v1',
    runtime.addressLimit({ name: 'api', limiter: refusals, counts: [401], message: TOO_MANY_REFUSALS }),
    authenticateApiKey(keys, createsOrderWithoutIdempotencyKey),
    rateLimit(perKey, runtime.limitedRequests()),
    jsonBodies(),
  );
  http.use(ordersRouter({ ...deps, keys }));
  http.use(paymentLinksRouter(deps));
  http.use(transactionsRouter(deps));
  http.use(payerAliasesRouter(deps));
  http.use(settingsRouter(deps));
  http.use(bankAccountsRouter(deps));
  http.use(eventsRouter(deps));
  http.use(testDepositsRouter(deps));
  http.use(webhookEndpointsRouter(deps));
  http.use('/v1', recheckCachedKey(keys));
}
