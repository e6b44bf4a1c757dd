import { BaseConfig, loadConfig as load } from '@pmatch/platform';
import { z } from 'zod';
import { ADAPTER_SECRETS_MISS_REFRESH_MS, ADAPTER_SECRETS_TTL_MS } from './data/adapter-secrets';

export const BankIngestConfig = BaseConfig.extend({
  BANK_INGEST_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  /** How long the opened adapter secrets are trusted before they are read again. */
  ADAPTER_CACHE_MS: z.coerce.number().int().min(0).default(ADAPTER_SECRETS_TTL_MS),
  /** How often at most a notification no cached secret verifies makes them be read again. */
  ADAPTER_MISS_REFRESH_MS: z.coerce.number().int().min(0).default(ADAPTER_SECRETS_MISS_REFRESH_MS),
});
export type BankIngestConfig = z.infer<typeof BankIngestConfig>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): BankIngestConfig => load(BankIngestConfig, env);
