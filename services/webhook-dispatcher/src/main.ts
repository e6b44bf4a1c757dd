import { discardHarmlessDeadLetters } from './use-cases/harmless-dead-letters';
import { readFileSync } from 'node:fs';
import { EventsRecorded, QUEUES, WebhookRequest } from '@pmatch/contracts';
import {
  AddressPolicy,
  BatchWriter,
  SecretBox,
  createCancellableResolver,
  forgetProcessedMessages,
  runService,
  startService,
  systemClock,
  type Clock,
  type Logger,
  type ResolveHost,
  type RunningService,
} from '@pmatch/platform';
import type { buildConnector } from 'undici';
import { eventHandler } from './amqp/events';
import { requestHandler } from './amqp/requests';
import { loadConfig, type DispatcherConfig } from './config';
import { recordAcknowledgedAttempts, type FinishedAttempt } from './data/attempts';
import { readWebhookBacklog } from './data/backlog';
import { EVENTS_CONSUMER, recordReceivedEvents, type ReceivedEvent } from './data/received-events';
import { REQUESTS_CONSUMER } from './data/resends';
import { deleteExpiredDeliveryLog } from './data/retention';
import { createFileMailer, createSmtpMailer } from './outbound/mailer';
import { AgentsByOrganisation } from './outbound/pinned-agent';
import { WebhookClient } from './outbound/webhook-client';
import { attemptDelivery } from './use-cases/attempt-delivery';
import { DeliveryScheduler, slowAfterMs } from './use-cases/delivery-scheduler';
import { EventSweep } from './use-cases/event-sweep';
import { createMetrics } from './use-cases/metrics';
import { sendDueEmails } from './use-cases/send-emails';

/**
 * Rows one statement records at most. A batch is what finished (or arrived) while the statement
 * before it ran, so in practice at most DELIVERY_CONCURRENCY attempts or DISPATCHER_PREFETCH
 * messages of one to three events; the caps bound a statement whatever the settings.
 */
const ACKNOWLEDGED_PER_STATEMENT = 200;
const RECEIVED_PER_STATEMENT = 200;
/** Events the event sweep reads per pass: one bounded range of events_created_at_idx. */
const SWEPT_PER_PASS = 500;

export interface Dispatcher extends RunningService {
  /** One scheduler pass as the poll makes it (skip, then claim), resolved once every attempt it started is recorded. */
  runDueDeliveries(): Promise<number>;
  /** Sends the owner e-mails that are due now. */
  sendDueEmails(): Promise<number>;
  /** One pass of the retention sweep: deletes delivery logs (and e-mails) older than 30 days. */
  deleteExpiredDeliveryLog(): Promise<number>;
  /** One pass of the event sweep (`EventSweep`): resolves with the events it read. */
  sweepEvents(): Promise<number>;
  /** Removes the dead letters whose events were all taken in since (`discardHarmlessDeadLetters`). */
  discardHarmlessDeadLetters(): Promise<number>;
}

/** What tests replace: DNS answers, the raw connection behind the address check, and retry jitter. */
export interface DispatcherSeams {
  resolveHost?: ResolveHost;
  connectVetted?: buildConnector.connector;
  random?: () => number;
}

/** The SMTP mailer of `SMTP_URL`, or, without it, one writing each e-mail to a file in `MAIL_DIR` (and saying so). */
async function mailerOf(config: DispatcherConfig, clock: Clock, logger: Logger) {
  if (config.SMTP_URL !== undefined) return createSmtpMailer(config.SMTP_URL, config.WEBHOOK_EMAIL_FROM);
  const mailer = await createFileMailer({ dir: config.MAIL_DIR, from: config.WEBHOOK_EMAIL_FROM, clock, logger });
  logger.warn({ mailDir: mailer.dir }, 'SMTP_URL is not set: e-mails are written to files in MAIL_DIR, not sent');
  return mailer;
}

export async function start(config: DispatcherConfig, clock: Clock = systemClock, seams: DispatcherSeams = {}): Promise<Dispatcher> {
  return startService(
    { name: 'webhook-dispatcher', config, port: config.WEBHOOK_DISPATCHER_PORT, adminPort: config.WEBHOOK_DISPATCHER_ADMIN_PORT },
    async (runtime) => {
      const { database, logger } = runtime;
      const { prisma } = database;
      const secretBox = new SecretBox(config.SECRETS_KEY, config.SECRETS_KEYS_OLD);
      const metrics = createMetrics(runtime.metrics, async () => {
        const now = clock.now();
        return { ...(await readWebhookBacklog(prisma, now)), now };
      });
      const { client, agents } = webhookClient(config, seams, logger);
      const mailer = await mailerOf(config, clock, logger);
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
      runtime.addWorker(scheduler);
      runtime.every('owner e-mails', config.EMAIL_POLL_INTERVAL_MS, () => sendDueEmails(emailDeps));
      runtime.every(
        'retention sweep',
        config.RETENTION_INTERVAL_MS,
        async () =>
          (await deleteExpiredDeliveryLog(prisma, clock.now())) + (await forgetProcessedMessages(prisma, [EVENTS_CONSUMER, REQUESTS_CONSUMER], clock.now())),
      );
      runtime.onStop(() => agents.close());
      runtime.onStop(() => mailer.close());

      const onDue = () => scheduler.nudge();
      const received = new BatchWriter((events: ReceivedEvent[]) => recordReceivedEvents(database.sql, events, clock.now()), RECEIVED_PER_STATEMENT);
      const receiveDeps = { received, metrics, onDue, logger };
      const eventSweep = new EventSweep(
        { ...receiveDeps, sql: database.sql, clock },
        { graceMs: config.EVENT_SWEEP_GRACE_MS, lookbackMs: config.EVENT_SWEEP_LOOKBACK_MS, batchSize: SWEPT_PER_PASS },
      );
      const deadLetterDeps = { broker: runtime.broker, sql: database.sql, logger };
      // Once a pass finds nothing more to take in, the dead letters it made harmless go.
      runtime.every('event sweep', config.EVENT_SWEEP_INTERVAL_MS, async () => {
        const read = await eventSweep.pass();
        if (read === 0) await discardHarmlessDeadLetters(deadLetterDeps).catch((error: unknown) => logger.warn({ err: error }, 'dead letters not looked at'));
        return read;
      });
      await runtime.consume(QUEUES.dispatcherEvents, EventsRecorded, eventHandler(receiveDeps), { prefetch: config.DISPATCHER_PREFETCH });
      await runtime.consume(
        QUEUES.dispatcherRequests,
        WebhookRequest,
        requestHandler({
          prisma,
          clock,
          secretBox,
          client,
          logger,
          metrics,
          onDue,
          enqueueTestEvent: (endpointId, send) => scheduler.enqueueTestEvent(endpointId, send),
        }),
        { prefetch: config.DISPATCHER_PREFETCH },
      );

      return {
        async runDueDeliveries() {
          const started = await scheduler.runDue({ sweep: true });
          await scheduler.drain();
          return started;
        },
        sendDueEmails: () => sendDueEmails(emailDeps),
        deleteExpiredDeliveryLog: () => deleteExpiredDeliveryLog(prisma, clock.now()),
        sweepEvents: () => eventSweep.pass(),
        discardHarmlessDeadLetters: () => discardHarmlessDeadLetters(deadLetterDeps),
      };
    },
  );
}

/** Merchants' endpoints reached through connections vetted and pinned per organisation (decision 66). */
function webhookClient(config: DispatcherConfig, seams: DispatcherSeams, logger: Logger): { client: WebhookClient; agents: AgentsByOrganisation } {
  const extraCa = config.WEBHOOK_CA_FILE === undefined ? undefined : readFileSync(config.WEBHOOK_CA_FILE, 'utf8');
  if (config.WEBHOOK_ALLOWED_CIDRS.length > 0 || extraCa !== undefined) {
    logger.warn(
      { allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS, caFile: config.WEBHOOK_CA_FILE },
      'webhook address or CA exemptions for test receivers are in force',
    );
  }
  const agents = new AgentsByOrganisation({
    policy: new AddressPolicy(config.WEBHOOK_ALLOWED_CIDRS),
    resolve: seams.resolveHost ?? createCancellableResolver({ servers: config.WEBHOOK_DNS_SERVERS, timeoutMs: config.WEBHOOK_DNS_TIMEOUT_MS }),
    lookupTimeoutMs: config.WEBHOOK_DNS_TIMEOUT_MS,
    lookupsPerOrganisation: config.WEBHOOK_DNS_LOOKUPS_PER_ORGANISATION,
    connectTimeoutMs: config.DELIVERY_TIMEOUT_MS,
    ...(extraCa === undefined ? {} : { extraCa }),
    ...(seams.connectVetted === undefined ? {} : { connectVetted: seams.connectVetted }),
  });
  return { client: new WebhookClient((organisationId) => agents.for(organisationId), config.DELIVERY_TIMEOUT_MS), agents };
}

if (require.main === module) runService('webhook-dispatcher', loadConfig, start);
