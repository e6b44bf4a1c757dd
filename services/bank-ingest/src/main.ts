import type { AddressInfo } from 'node:net';
import { BankIngestCommand, QUEUES } from '@pmatch/contracts';
import { createDatabase } from '@pmatch/db';
import {
  Broker,
  OutboxRelay,
  SecretBox,
  closeServer,
  createHttpApp,
  createLogger,
  exitOnLoss,
  finishHttpApp,
  listen,
  runMain,
  clockFromEnv,
  systemClock,
  type Clock,
} from '@pmatch/platform';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { commandHandler } from './amqp/commands';
import { loadConfig, type BankIngestConfig } from './config';
import { AdapterCache, listActiveAdapters } from './data/adapters';
import { ingestRoutes } from './http/routes';

export interface BankIngest {
  port: number;
  stop(): Promise<void>;
}

export async function start(config: BankIngestConfig, clock: Clock = systemClock): Promise<BankIngest> {
  const logger = createLogger('bank-ingest', config.LOG_LEVEL);
  const database = createDatabase(config.DATABASE_URL, {
    poolSize: config.DATABASE_POOL_SIZE,
    onIdleConnectionError: (error) => logger.warn({ err: error }, 'idle database connection lost; the pool replaces it'),
  });
  const { prisma } = database;
  const broker = await Broker.connect(config.RABBITMQ_URL, config.AMQP_PREFIX, logger, exitOnLoss(logger, 'RabbitMQ connection'));
  const relay = new OutboxRelay(database, broker, logger, config.OUTBOX_POLL_INTERVAL_MS);
  const secretBox = new SecretBox(config.SECRETS_KEY);

  const adapters = new AdapterCache(() => listActiveAdapters(prisma), (sealed) => secretBox.open(sealed), {
    ttlMs: config.ADAPTER_CACHE_MS,
    missRefreshMs: config.ADAPTER_MISS_REFRESH_MS,
    now: () => clock.now().getTime(),
    onUnopenable: (adapterId) => logger.error({ adapterId }, 'bank adapter secret does not open with SECRETS_KEY; that adapter is refused'),
  });

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const app = createHttpApp({
    logger,
    metrics,
    readiness: { database: async () => void (await prisma.$queryRaw`SELECT 1`), broker: () => broker.ping() },
    bodies: 'where mounted',
  });
  app.use(ingestRoutes({ database, clock, adapters, outbox: relay, statementMaxBytes: config.STATEMENT_MAX_BYTES, spoolDirectory: config.STATEMENT_SPOOL_DIR }));
  finishHttpApp(app, logger);

  const stopCommands = await broker.consume(
    QUEUES.bankIngestCommands,
    BankIngestCommand,
    commandHandler({ database, broker, clock, logger, outbox: relay }),
    { prefetch: 20 },
  );
  relay.start();
  const server = await listen(app, config.BANK_INGEST_PORT);
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'bank-ingest listening');

  return {
    port,
    async stop() {
      await closeServer(server);
      await stopCommands();
      await relay.stop();
      await broker.close();
      await prisma.$disconnect();
    },
  };
}

if (require.main === module) {
  const config = loadConfig();
  runMain('bank-ingest', createLogger('bank-ingest', config.LOG_LEVEL), () => start(config, clockFromEnv()));
}
