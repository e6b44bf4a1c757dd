import { BaseConfig, loadConfig as load } from '@pmatch/platform';
import { z } from 'zod';

export const BankIngestConfig = BaseConfig.extend({
  BANK_INGEST_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  /** How long the list of adapter secrets is trusted before it is read again. */
  ADAPTER_CACHE_MS: z.coerce.number().int().min(0).default(30_000),
});
export type BankIngestConfig = z.infer<typeof BankIngestConfig>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): BankIngestConfig => load(BankIngestConfig, env);
