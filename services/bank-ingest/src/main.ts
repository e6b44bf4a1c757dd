import type { AddressInfo } from 'node:net';
import { BankIngestCommand, QUEUES } from '@pmatch/contracts';
import { createPrisma } from '@pmatch/db';
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
import { listActiveAdapterSecrets } from './data/transactions';
import type { AdapterSecret } from './domain/adapter-auth';
import { notificationsRouter } from './http/notifications';

export interface BankIngest {
  port: number;
  stop(): Promise<void>;
}

export async function start(config: BankIngestConfig, clock: Clock = systemClock): Promise<BankIngest> {
  const logger = createLogger('bank-ingest', config.LOG_LEVEL);
  const prisma = createPrisma(config.DATABASE_URL, {
    poolSize: config.DATABASE_POOL_SIZE,
    onIdleConnectionError: (error) => logger.warn({ err: error }, 'idle database connection lost; the pool replaces it'),
  });
  const broker = await Broker.connect(config.RABBITMQ_URL, config.AMQP_PREFIX, logger, exitOnLoss(logger, 'RabbitMQ connection'));
  const relay = new OutboxRelay(prisma, broker, logger, config.OUTBOX_POLL_INTERVAL_MS);
  const secretBox = new SecretBox(config.SECRETS_KEY);

  let cached: { at: number; adapters: AdapterSecret[] } | undefined;
  const adapterSecrets = async (refresh: boolean): Promise<AdapterSecret[]> => {
    if (refresh || cached === undefined || Date.now() - cached.at > config.ADAPTER_CACHE_MS) {
      const rows = await listActiveAdapterSecrets(prisma);
      cached = { at: Date.now(), adapters: rows.map((r) => ({ id: r.id, secret: secretBox.open(r.secretEncrypted) })) };
    }
    return cached.adapters;
  };

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const app = createHttpApp({
    logger,
    metrics,
    readiness: { database: async () => void (await prisma.$queryRaw`SELECT 1`), broker: () => broker.ping() },
  });
  app.use(notificationsRouter({ prisma, clock, adapterSecrets, onStored: () => relay.nudge() }));
  finishHttpApp(app, logger);

  const stopCommands = await broker.consume(
    QUEUES.bankIngestCommands,
    BankIngestCommand,
    commandHandler({ prisma, broker, clock, logger, onStored: () => relay.nudge() }),
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
