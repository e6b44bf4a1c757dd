import type { AddressInfo } from 'node:net';
import { buildOpenApiDocument } from '@pmatch/contracts';
import { createDatabase } from '@pmatch/db';
import {
  AddressPolicy,
  Broker,
  OutboxRelay,
  PeriodicTask,
  RateLimiter,
  SecretBox,
  closeServer,
  createHttpApp,
  createLogger,
  exitOnLoss,
  finishHttpApp,
  jsonBodies,
  listen,
  runMain,
  clockFromEnv,
  systemClock,
  type Clock,
} from '@pmatch/platform';
import { Redis } from 'ioredis';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { loadConfig, type OrdersApiConfig } from './config';
import { deleteExpiredRecords } from './data/retention';
import { ApiKeys, authenticate, recheckCachedKey } from './http/auth';
import { bankAccountsRouter } from './http/bank-accounts';
import { eventsRouter } from './http/events';
import { MatcherClient } from './http/matcher-client';
import { createsOrderWithoutIdempotencyKey, ordersRouter } from './http/orders';
import { paymentPageRouter } from './http/payment-page';
import { rateLimit } from './http/rate-limit';
import { referenceDocsRouter } from './http/reference-docs';
import { settingsRouter } from './http/settings';
import { testDepositsRouter } from './http/test-deposits';
import { transactionsRouter } from './http/transactions';
import { webhookEndpointsRouter } from './http/webhook-endpoints';

export interface OrdersApi {
  port: number;
  stop(): Promise<void>;
}

export async function start(config: OrdersApiConfig, clock: Clock = systemClock): Promise<OrdersApi> {
  const logger = createLogger('orders-api', config.LOG_LEVEL);
  const database = createDatabase(config.DATABASE_URL, {
    poolSize: config.DATABASE_POOL_SIZE,
    onIdleConnectionError: (error) => logger.warn({ err: error }, 'idle database connection lost; the pool replaces it'),
  });
  const { prisma } = database;
  const broker = await Broker.connect(config.RABBITMQ_URL, config.AMQP_PREFIX, logger, exitOnLoss(logger, 'RabbitMQ connection'));
  const relay = new OutboxRelay(database, broker, logger, config.OUTBOX_POLL_INTERVAL_MS);

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const app = createHttpApp({
    logger,
    metrics,
    readiness: { database: async () => void (await prisma.$queryRaw`SELECT 1`), broker: () => broker.ping() },
    bodies: 'where mounted',
  });
  app.use(paymentPageRouter({ prisma, clock }));
  const openApiDocument = buildOpenApiDocument(config.PUBLIC_BASE_URL);
  // The document describes the API; it holds nothing of a merchant's, so it needs no key.
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  app.use(referenceDocsRouter());
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const limiter = new RateLimiter(redis, config.REDIS_PREFIX, config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST);
  const keys = new ApiKeys(database.sql, metrics);
  // The key first: a request without one is refused before its body is read or parsed.
  app.use('/v1', authenticate(keys, createsOrderWithoutIdempotencyKey), rateLimit(limiter, logger), jsonBodies());
  const matcher = new MatcherClient(broker, config.COMMAND_TIMEOUT_MS);
  app.use(
    ordersRouter({
      prisma,
      database,
      clock,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      matcher,
      onRecorded: () => relay.nudge(),
      handOver: (messages) => relay.publishLeased(messages),
      keys,
      orderWriteGatherMs: config.ORDER_WRITE_GATHER_MS,
    }),
  );
  app.use(transactionsRouter({ prisma, matcher }));
  app.use(settingsRouter({ prisma, clock }));
  app.use(bankAccountsRouter({ prisma }));
  app.use(eventsRouter({ prisma }));
  app.use(testDepositsRouter({ prisma, broker, clock, commandTimeoutMs: config.COMMAND_TIMEOUT_MS }));
  app.use(
    webhookEndpointsRouter({
      prisma,
      clock,
      secretBox: new SecretBox(config.SECRETS_KEY),
      addressPolicy: new AddressPolicy(config.WEBHOOK_ALLOWED_CIDRS),
      onRecorded: () => relay.nudge(),
    }),
  );
  app.use('/v1', recheckCachedKey(keys));
  finishHttpApp(app, logger);

  relay.start();
  // Retention needs only the database; replicas running it at once just share the deletes.
  const retention = new PeriodicTask('retention sweep', () => deleteExpiredRecords(prisma, clock.now()), config.RETENTION_SWEEP_INTERVAL_MS, logger);
  retention.start();
  const server = await listen(app, config.ORDERS_API_PORT);
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'orders-api listening');

  return {
    port,
    async stop() {
      await closeServer(server);
      await retention.stop();
      await relay.stop();
      await broker.close();
      redis.disconnect();
      await prisma.$disconnect();
    },
  };
}

if (require.main === module) {
  const config = loadConfig();
  runMain('orders-api', createLogger('orders-api', config.LOG_LEVEL), () => start(config, clockFromEnv()));
}
