import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { EventRecordedMessage, QUEUES, WebhookRequest } from '@pmatch/contracts';
import { createDatabase } from '@pmatch/db';
import {
  AddressPolicy,
  BatchWriter,
  Broker,
  PeriodicTask,
  SecretBox,
  clockFromEnv,
  closeServer,
  createHttpApp,
  createLogger,
  exitOnLoss,
  finishHttpApp,
  listen,
  resolveWithSystem,
  runMain,
  systemClock,
  type Clock,
  type ResolveHost,
  forgetProcessedMessages,
} from '@pmatch/platform';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { buildConnector } from 'undici';
import { eventHandler } from './amqp/events';
import { requestHandler } from './amqp/requests';
import { loadConfig, type DispatcherConfig } from './config';
import {
  EVENTS_CONSUMER,
  REQUESTS_CONSUMER,
  recordAcknowledgedAttempts,
  recordReceivedEvents,
  type FinishedAttempt,
  type ReceivedEvent,
} from './data/deliveries';
import { deleteExpiredDeliveryLog } from './data/retention';
import { DeliveryScheduler, slowAfterMs } from './delivery-scheduler';
import { createMetrics } from './metrics';
import { createSmtpMailer } from './outbound/mailer';
import { createPinnedAgent } from './outbound/pinned-agent';
import { WebhookClient } from './outbound/webhook-client';
import { attemptDelivery } from './use-cases/attempt-delivery';
import { sendDueEmails } from './use-cases/send-emails';

/**
 * Acknowledged attempts recorded by one statement at most: a batch is what finished while the
 * statement before it ran, so at most DELIVERY_CONCURRENCY in practice; the cap bounds the
 * statement's size whatever the setting.
 */
const ACKNOWLEDGED_PER_STATEMENT = 200;

/**
 * Received events recorded by one statement at most: a batch is what arrived while the statement
 * before it ran, so at most DISPATCHER_PREFETCH messages of up to EVENTS_PER_ANNOUNCEMENT events
 * (in practice one to three); the cap bounds the statement's size (five delivery ids per event)
 * whatever the setting.
 */
const RECEIVED_PER_STATEMENT = 200;

export interface Dispatcher {
  port: number;
  /**
   * One scheduler pass as the poll makes it (skipping deliveries of switched-off endpoints, then
   * claiming), waiting until every attempt it started is recorded (tests step time with it).
   */
  runDueDeliveries(): Promise<number>;
  /** Sends the owner e-mails that are due now. */
  sendDueEmails(): Promise<number>;
  /** One pass of the retention sweep: deletes delivery logs (and e-mails) older than 30 days. */
  deleteExpiredDeliveryLog(): Promise<number>;
  stop(): Promise<void>;
}

/** What tests replace: DNS answers, the raw connection behind the address check, and retry jitter. */
export interface DispatcherSeams {
  resolveHost?: ResolveHost;
  connectVetted?: buildConnector.connector;
  random?: () => number;
}

export async function start(config: DispatcherConfig, clock: Clock = systemClock, seams: DispatcherSeams = {}): Promise<Dispatcher> {
  const logger = createLogger('webhook-dispatcher', config.LOG_LEVEL);
  const extraCa = config.WEBHOOK_CA_FILE === undefined ? undefined : readFileSync(config.WEBHOOK_CA_FILE, 'utf8');
  if (config.WEBHOOK_ALLOWED_CIDRS.length > 0 || extraCa !== undefined) {
    logger.warn({ allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS, caFile: config.WEBHOOK_CA_FILE }, 'webhook address or CA exemptions for test receivers are in force');
  }
  const database = createDatabase(config.DATABASE_URL, {
    poolSize: config.DATABASE_POOL_SIZE,
    onIdleConnectionError: (error) => logger.warn({ err: error }, 'idle database connection lost; the pool replaces it'),
  });
  const { prisma } = database;
  const broker = await Broker.connect(config.RABBITMQ_URL, config.AMQP_PREFIX, logger, exitOnLoss(logger, 'RabbitMQ connection'));
  const secretBox = new SecretBox(config.SECRETS_KEY);

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createMetrics(registry);
  const agent = createPinnedAgent({
    policy: new AddressPolicy(config.WEBHOOK_ALLOWED_CIDRS),
    resolve: seams.resolveHost ?? resolveWithSystem,
    connectTimeoutMs: config.DELIVERY_TIMEOUT_MS,
    ...(extraCa === undefined ? {} : { extraCa }),
    ...(seams.connectVetted === undefined ? {} : { connectVetted: seams.connectVetted }),
  });
  const client = new WebhookClient(agent, config.DELIVERY_TIMEOUT_MS);
  const mailer = config.SMTP_URL === undefined ? undefined : createSmtpMailer(config.SMTP_URL, config.WEBHOOK_EMAIL_FROM);
  const acknowledged = new BatchWriter((attempts: FinishedAttempt[]) => recordAcknowledgedAttempts(database.sql, attempts), ACKNOWLEDGED_PER_STATEMENT);
  const attemptDeps = { database, acknowledged, clock, secretBox, client, logger, metrics, random: seams.random ?? Math.random };

  const scheduler = new DeliveryScheduler(
    { database, clock, logger, metrics, attempt: (delivery) => attemptDelivery(attemptDeps, delivery) },
    {
      concurrency: config.DELIVERY_CONCURRENCY,
      perEndpoint: config.DELIVERY_CONCURRENCY_PER_ENDPOINT,
      leaseMs: config.DELIVERY_LEASE_MS,
      pollIntervalMs: config.DELIVERY_POLL_INTERVAL_MS,
      slowAfterMs: slowAfterMs(config.DELIVERY_TIMEOUT_MS),
    },
  );
  const emailDeps = { prisma, clock, logger, metrics, mailer };
  const emails = new PeriodicTask('owner e-mails', () => sendDueEmails(emailDeps), config.EMAIL_POLL_INTERVAL_MS, logger);
  const retention = new PeriodicTask(
    'retention sweep',
    async () => (await deleteExpiredDeliveryLog(prisma, clock.now())) + (await forgetProcessedMessages(prisma, [EVENTS_CONSUMER, REQUESTS_CONSUMER], clock.now())),
    config.RETENTION_INTERVAL_MS,
    logger,
  );

  const app = createHttpApp({
    logger,
    metrics: registry,
    readiness: { database: async () => void (await prisma.$queryRaw`SELECT 1`), broker: () => broker.ping() },
  });
  finishHttpApp(app, logger);

  const onDue = () => scheduler.nudge();
  const received = new BatchWriter((events: ReceivedEvent[]) => recordReceivedEvents(database.sql, events, clock.now()), RECEIVED_PER_STATEMENT);
  const stopEvents = await broker.consume(QUEUES.dispatcherEvents, EventRecordedMessage, eventHandler({ received, metrics, onDue }), {
    prefetch: config.DISPATCHER_PREFETCH,
  });
  const stopRequests = await broker.consume(
    QUEUES.dispatcherRequests,
    WebhookRequest,
    requestHandler({ prisma, clock, secretBox, client, logger, metrics, onDue, enqueueTestEvent: (endpointId, send) => scheduler.enqueueTestEvent(endpointId, send) }),
    { prefetch: config.DISPATCHER_PREFETCH },
  );
  scheduler.start();
  emails.start();
  retention.start();
  const server = await listen(app, config.WEBHOOK_DISPATCHER_PORT);
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'webhook-dispatcher running');

  return {
    port,
    async runDueDeliveries() {
      const started = await scheduler.runDue({ sweep: true });
      await scheduler.drain();
      return started;
    },
    sendDueEmails: () => sendDueEmails(emailDeps),
    deleteExpiredDeliveryLog: () => deleteExpiredDeliveryLog(prisma, clock.now()),
    async stop() {
      await closeServer(server);
      await stopEvents();
      await stopRequests();
      await scheduler.stop();
      await emails.stop();
      await retention.stop();
      await agent.close();
      mailer?.close();
      await broker.close();
      await prisma.$disconnect();
    },
  };
}

if (require.main === module) {
  const config = loadConfig();
  runMain('webhook-dispatcher', createLogger('webhook-dispatcher', config.LOG_LEVEL), () => start(config, clockFromEnv()));
}
