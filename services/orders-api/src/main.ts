import { buildOpenApiDocument } from '@pmatch/contracts';
import { AddressPolicy, SecretBox, jsonBodies, runService, startService, systemClock, type Clock, type RunningService } from '@pmatch/platform';
import { loadConfig, type OrdersApiConfig } from './config';
import { consoleApp } from './console/app';
import { SESSION_IDLE_MS, SESSION_MAX_MS, deleteEndedSessions } from './use-cases/console-session';
import { markKeyUsed } from './data/keys';
import { LoginThrottle } from './data/login-throttle';
import { newOrderWriter } from './data/orders';
import { deleteExpiredRecords } from './data/retention';
import { ApiKeys, authenticate, recheckCachedKey } from './http/auth';
import { bankAccountsRouter } from './http/bank-accounts';
import { eventsRouter } from './http/events';
import { createsOrderWithoutIdempotencyKey, ordersRouter } from './http/orders';
import { paymentLinkPageRouter } from './http/payment-link-page';
import { paymentLinksRouter } from './http/payment-links';
import { paymentPageRouter } from './http/payment-page';
import { rateLimit } from './http/rate-limit';
import { referenceDocsRouter } from './http/reference-docs';
import { settingsRouter } from './http/settings';
import { testDepositsRouter } from './http/test-deposits';
import { transactionsRouter } from './http/transactions';
import { underPath } from './http/under-path';
import { webhookEndpointsRouter } from './http/webhook-endpoints';
import { BankIngestClient } from './outbound/bank-ingest-client';
import { MatcherClient } from './outbound/matcher-client';
import type { OrdersApiDeps } from './use-cases/deps';

export type OrdersApi = RunningService;

export async function start(config: OrdersApiConfig, clock: Clock = systemClock): Promise<OrdersApi> {
  return startService(
    { name: 'orders-api', config, port: config.ORDERS_API_PORT, adminPort: config.ORDERS_API_ADMIN_PORT, bodies: 'where mounted' },
    (runtime) => {
      const { database, broker, logger, http } = runtime;
      const relay = runtime.outboxRelay();
      const deps: OrdersApiDeps = {
        database,
        clock,
        publicBaseUrl: config.PUBLIC_BASE_URL,
        outbox: relay,
        writeNewOrder: newOrderWriter(database.sql, config.PUBLIC_BASE_URL, (messages) => relay.publishLeased(messages), config.ORDER_WRITE_GATHER_MS),
        matcher: new MatcherClient(broker, config.COMMAND_TIMEOUT_MS),
        bankIngest: new BankIngestClient(broker, config.COMMAND_TIMEOUT_MS),
        secretBox: new SecretBox(config.SECRETS_KEY, config.SECRETS_KEYS_OLD),
        addressPolicy: new AddressPolicy(config.WEBHOOK_ALLOWED_CIDRS),
      };

      const redis = runtime.redis('best-effort');
      // Per client address, in front of everything that answers without an API key: docs/decisions/0070-limits-before-authentication.md.
      const refusals = runtime.rateLimiter(config.REFUSAL_LIMIT_PER_SECOND, config.REFUSAL_LIMIT_BURST);
      const tooManyRefusals = 'Too many refused requests from this address; retry after the time in Retry-After.';
      http.use('/pay', runtime.addressLimit({ name: 'payment-page', limiter: refusals, counts: [404], message: tooManyRefusals }));
      http.use(underPath('/pay', paymentPageRouter(deps)));
      const consoleLimiter = runtime.rateLimiter(config.CONSOLE_LIMIT_PER_SECOND, config.CONSOLE_LIMIT_BURST);
      http.use(
        '/dashboard',
        runtime.addressLimit({
          name: 'console',
          limiter: consoleLimiter,
          counts: 'every request',
          message: 'Too many requests from this address; retry after the time in Retry-After.',
        }),
      );
      http.use('/link', runtime.addressLimit({ name: 'payment-link', limiter: refusals, counts: [404], message: tooManyRefusals }));
      // Per buyer address: a burst of PAYMENT_LINK_ORDERS_PER_HOUR orders, refilled over the hour.
      const linkOrders = runtime.rateLimiter(config.PAYMENT_LINK_ORDERS_PER_HOUR / 3600, config.PAYMENT_LINK_ORDERS_PER_HOUR);
      http.use(underPath('/link', paymentLinkPageRouter(deps, { limiter: linkOrders, logger })));
      http.use(
        underPath(
          '/dashboard',
          consoleApp(deps, {
            throttle: new LoginThrottle(redis, config.REDIS_PREFIX),
            cookies: { secure: config.NODE_ENV === 'production' || config.PUBLIC_BASE_URL.startsWith('https:') },
            publicOrigin: new URL(config.PUBLIC_BASE_URL).origin,
            logger,
          }),
        ),
      );
      const openApiDocument = buildOpenApiDocument(config.PUBLIC_BASE_URL);
      // The document describes the API; it holds nothing of a merchant's, so it needs no key.
      http.get('/v1/openapi.json', (_req, res) => {
        res.json(openApiDocument);
      });
      http.use(underPath('/docs', referenceDocsRouter()));
      const perKey = runtime.rateLimiter(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST);
      const keys = new ApiKeys(database.sql, runtime.metrics, (keyId, at) => markKeyUsed(database.prisma, keyId, at), clock, logger);
      // The address and the key first: a request without a valid key is refused before its body is read or parsed.
      http.use(
        '/v1',
        runtime.addressLimit({ name: 'api', limiter: refusals, counts: [401], message: tooManyRefusals }),
        authenticate(keys, createsOrderWithoutIdempotencyKey),
        rateLimit(perKey, runtime.limitedRequests()),
        jsonBodies(),
      );
      http.use(ordersRouter({ ...deps, keys }));
      http.use(paymentLinksRouter(deps));
      http.use(transactionsRouter(deps));
      http.use(settingsRouter(deps));
      http.use(bankAccountsRouter(deps));
      http.use(eventsRouter(deps));
      http.use(testDepositsRouter(deps));
      http.use(webhookEndpointsRouter(deps));
      http.use('/v1', recheckCachedKey(keys));

      // Retention needs only the database; replicas running it at once just share the deletes.
      runtime.every('retention sweep', config.RETENTION_SWEEP_INTERVAL_MS, () => deleteExpiredRecords(database.prisma, clock.now()));
      runtime.every('console session sweep', config.RETENTION_SWEEP_INTERVAL_MS, async () => {
        const now = clock.now().getTime();
        await deleteEndedSessions(database.prisma, new Date(now - SESSION_IDLE_MS), new Date(now - SESSION_MAX_MS));
        return 0;
      });
      return {};
    },
  );
}

if (require.main === module) runService('orders-api', loadConfig, start);
