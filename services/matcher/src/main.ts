import type { AddressInfo } from 'node:net';
import { DepositReceived, MatcherCommand, OrderRegisteredMessage, QUEUES } from '@pmatch/contracts';
import { createDatabase } from '@pmatch/db';
import {
  Broker,
  OutboxRelay,
  PeriodicTask,
  RedisLock,
  closeServer,
  createHttpApp,
  createLogger,
  exitOnLoss,
  forgetProcessedMessages,
  finishHttpApp,
  listen,
  runMain,
  clockFromEnv,
  systemClock,
  type Clock,
} from '@pmatch/platform';
import { Redis } from 'ioredis';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { commandHandler } from './amqp/commands';
import { depositHandler } from './amqp/deposits';
import { lateOrderHandler } from './amqp/late-orders';
import { loadConfig, type MatcherConfig } from './config';
import type { MatcherDeps } from './use-cases/deps';
import { COMMANDS_CONSUMER } from './use-cases/commands';
import { DEPOSITS_CONSUMER } from './use-cases/decide-deposit';
import { expireDueOrders } from './use-cases/expire-orders';
import { LATE_ORDERS_CONSUMER } from './use-cases/late-orders';
import { redeliverPendingDeposits } from './use-cases/redeliver-pending';

export interface Matcher {
  port: number;
  stop(): Promise<void>;
}

export async function start(config: MatcherConfig, clock: Clock = systemClock): Promise<Matcher> {
  const logger = createLogger('matcher', config.LOG_LEVEL);
  const database = createDatabase(config.DATABASE_URL, {
    poolSize: config.DATABASE_POOL_SIZE,
    onIdleConnectionError: (error) => logger.warn({ err: error }, 'idle database connection lost; the pool replaces it'),
  });
  const { prisma } = database;
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 3 });
  const broker = await Broker.connect(config.RABBITMQ_URL, config.AMQP_PREFIX, logger, exitOnLoss(logger, 'RabbitMQ connection'));
  const relay = new OutboxRelay(database, broker, logger, config.OUTBOX_POLL_INTERVAL_MS);
  const lock = new RedisLock(redis, config.REDIS_PREFIX);

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const app = createHttpApp({
    logger,
    metrics,
    readiness: {
      database: async () => void (await prisma.$queryRaw`SELECT 1`),
      broker: () => broker.ping(),
      redis: async () => void (await redis.ping()),
    },
  });
  finishHttpApp(app, logger);

  const deps: MatcherDeps = {
    database,
    prisma,
    lock,
    clock,
    logger,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    lockTtlMs: config.LOCK_TTL_MS,
    lockWaitMs: config.LOCK_WAIT_MS,
  };
  const onRecorded = () => relay.nudge();
  const stopConsumers = [
    await broker.consume(QUEUES.matcherDeposits, DepositReceived, depositHandler({ ...deps, broker, handOver: (messages) => relay.publishLeased(messages) }), {
      prefetch: config.MATCHER_PREFETCH,
    }),
    await broker.consume(QUEUES.matcherLateOrders, OrderRegisteredMessage, lateOrderHandler({ ...deps, onRecorded }), {
      prefetch: config.MATCHER_PREFETCH,
    }),
    await broker.consume(QUEUES.matcherCommands, MatcherCommand, commandHandler({ ...deps, broker, onRecorded }), {
      prefetch: config.MATCHER_PREFETCH,
    }),
  ];
  const sweeper = new PeriodicTask(
    'expiry sweep',
    async () => {
      const expired = await expireDueOrders(deps);
      if (expired > 0) relay.nudge();
      return expired;
    },
    config.EXPIRY_SWEEP_INTERVAL_MS,
    logger,
  );
  sweeper.start();
  const redelivery = new PeriodicTask(
    'pending deposit redelivery',
    async () => {
      const asked = await redeliverPendingDeposits(deps);
      if (asked > 0) relay.nudge();
      // Never loop at once: what was asked for needs the grace period before it counts as stuck.
      return 0;
    },
    config.PENDING_SWEEP_INTERVAL_MS,
    logger,
  );
  redelivery.start();
  const retention = new PeriodicTask(
    'inbox retention',
    () => forgetProcessedMessages(prisma, [DEPOSITS_CONSUMER, COMMANDS_CONSUMER, LATE_ORDERS_CONSUMER], clock.now()),
    config.RETENTION_INTERVAL_MS,
    logger,
  );
  retention.start();
  relay.start();
  const server = await listen(app, config.MATCHER_PORT);
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'matcher running');

  return {
    port,
    async stop() {
      await closeServer(server);
      await sweeper.stop();
      await redelivery.stop();
      await retention.stop();
      for (const stopConsumer of stopConsumers) await stopConsumer();
      await relay.stop();
      await broker.close();
      redis.disconnect();
      await prisma.$disconnect();
    },
  };
}

if (require.main === module) {
  const config = loadConfig();
  runMain('matcher', createLogger('matcher', config.LOG_LEVEL), () => start(config, clockFromEnv()));
}
