import { BankIngestCommand, QUEUES } from '@pmatch/contracts';
import { SecretBox, runService, startService, systemClock, type Clock, type RunningService } from '@pmatch/platform';
import { commandHandler } from './amqp/commands';
import { loadConfig, type BankIngestConfig } from './config';
import { AdapterSecretCache, listActiveAdapterSecrets } from './data/adapter-secrets';
import { notificationsRouter } from './http/notifications';

export type BankIngest = RunningService;

export async function start(config: BankIngestConfig, clock: Clock = systemClock): Promise<BankIngest> {
  return startService({ name: 'bank-ingest', config, port: config.BANK_INGEST_PORT }, async (runtime) => {
    const { database, broker, logger } = runtime;
    const relay = runtime.outboxRelay();
    const secretBox = new SecretBox(config.SECRETS_KEY);
    const adapterSecrets = new AdapterSecretCache(() => listActiveAdapterSecrets(database.prisma), (sealed) => secretBox.open(sealed), {
      ttlMs: config.ADAPTER_CACHE_MS,
      missRefreshMs: config.ADAPTER_MISS_REFRESH_MS,
    });
    runtime.http.use(notificationsRouter({ database, clock, adapterSecrets, outbox: relay }));
    await runtime.consume(QUEUES.bankIngestCommands, BankIngestCommand, commandHandler({ database, broker, clock, logger, outbox: relay }), { prefetch: 20 });
    return {};
  });
}

if (require.main === module) runService('bank-ingest', loadConfig, start);
