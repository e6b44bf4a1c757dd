import { BankIngestCommand, QUEUES } from '@pmatch/contracts';
import { SecretBox, runService, startService, systemClock, type Clock, type RunningService } from '@pmatch/platform';
import { commandHandler } from './amqp/commands';
import { loadConfig, type BankIngestConfig } from './config';
import { AdapterCache, listActiveAdapters } from './data/adapters';
import { ingestRoutes } from './http/routes';
import { SpoolSlots } from './http/statement-upload';
import { createIngestMetrics } from './use-cases/metrics';

export type BankIngest = RunningService;

export async function start(config: BankIngestConfig, clock: Clock = systemClock): Promise<BankIngest> {
  return startService(
    { name: 'bank-ingest', config, port: config.BANK_INGEST_PORT, adminPort: config.BANK_INGEST_ADMIN_PORT, bodies: 'where mounted', readyWithoutBroker: true },
    async (runtime) => {
      const { database, broker, logger } = runtime;
      const relay = runtime.outboxRelay();
      const secretBox = new SecretBox(config.SECRETS_KEY, config.SECRETS_KEYS_OLD);
      const metrics = createIngestMetrics(runtime.metrics);
      const adapters = new AdapterCache(
        () => listActiveAdapters(database.prisma),
        (sealed, id) => secretBox.open(sealed, { kind: 'bank_adapter', id }),
        {
          ttlMs: config.ADAPTER_CACHE_MS,
          missRefreshMs: config.ADAPTER_MISS_REFRESH_MS,
          now: () => clock.now().getTime(),
          onUnopenable: (adapterId) =>
            logger.error(
              { adapterId },
              "bank adapter secret does not open (another row's secret, or a key not in SECRETS_KEY or SECRETS_KEYS_OLD); that adapter is refused",
            ),
        },
      );
      // Per client address, before a body is read or a signature checked: docs/decisions/0070-limits-before-authentication.md.
      const refusals = runtime.rateLimiter(config.REFUSAL_LIMIT_PER_SECOND, config.REFUSAL_LIMIT_BURST);
      runtime.http.use(
        '/ingest',
        runtime.addressLimit({
          name: 'ingest',
          limiter: refusals,
          counts: [400, 401, 413],
          message: 'Too many refused requests from this address; retry after the time in Retry-After.',
        }),
      );
      // Statement uploads, every one counted, per address here and per adapter id in the route, before a body is read.
      const uploads = runtime.rateLimiter(config.STATEMENT_LIMIT_PER_SECOND, config.STATEMENT_LIMIT_BURST);
      runtime.http.use(
        '/ingest/v1/statements',
        runtime.addressLimit({
          name: 'statements',
          limiter: uploads,
          counts: 'every request',
          message: 'Too many statement files from this address; send the next after the time in Retry-After.',
        }),
      );
      runtime.http.use(
        ingestRoutes({
          database,
          clock,
          adapters,
          outbox: relay,
          metrics,
          statementMaxBytes: config.STATEMENT_MAX_BYTES,
          spoolDirectory: config.STATEMENT_SPOOL_DIR,
          spoolSlots: new SpoolSlots(config.STATEMENT_SPOOL_MAX),
          uploadLimiter: uploads,
        }),
      );
      await runtime.consume(QUEUES.bankIngestCommands, BankIngestCommand, commandHandler({ database, broker, clock, logger, outbox: relay, metrics }), {
        prefetch: 20,
      });
      return {};
    },
  );
}

if (require.main === module) runService('bank-ingest', loadConfig, start);
