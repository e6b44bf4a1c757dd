import { BaseConfig, loadConfig as load } from '@pmatch/platform';
import { z } from 'zod';
import { ADAPTERS_MISS_REFRESH_MS, ADAPTERS_TTL_MS } from './data/adapters';

export const BankIngestConfig = BaseConfig.extend({
  BANK_INGEST_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  /** /healthz, /readyz and /metrics; never routed from outside. */
  BANK_INGEST_ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(9101),
  /** How long the adapters (opened secrets, bound accounts) are trusted before they are read again. */
  ADAPTER_CACHE_MS: z.coerce.number().int().min(0).default(ADAPTERS_TTL_MS),
  /** How often at most a request naming an adapter id not cached makes them be read again. */
  ADAPTER_MISS_REFRESH_MS: z.coerce.number().int().min(0).default(ADAPTERS_MISS_REFRESH_MS),
  /** Largest statement file taken by POST /ingest/v1/statements (kept on disk while imported). */
  STATEMENT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(64 * 1024 * 1024),
  /** Where statement uploads are kept while they are imported; the system's temporary folder by default. */
  STATEMENT_SPOOL_DIR: z.string().min(1).optional(),
  /** Per client address: requests refused before a signature is verified (400, 401, 413). */
  REFUSAL_LIMIT_PER_SECOND: z.coerce.number().positive().default(5),
  REFUSAL_LIMIT_BURST: z.coerce.number().int().min(1).default(50),
});
export type BankIngestConfig = z.infer<typeof BankIngestConfig>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): BankIngestConfig => load(BankIngestConfig, env);
