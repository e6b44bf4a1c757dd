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
  /**
   * Statement uploads a process spools and imports at once; one more is answered 503 with
   * Retry-After before its body is read. The spool needs room for this many STATEMENT_MAX_BYTES
   * files (and `SPOOL_MARGIN_BYTES`); each import holds one database connection while it stores.
   */
  STATEMENT_SPOOL_MAX: z.coerce.number().int().min(1).default(4),
  /** Statement uploads per client address and per adapter id, before the body is read or a signature checked. */
  STATEMENT_LIMIT_PER_SECOND: z.coerce.number().positive().default(1),
  STATEMENT_LIMIT_BURST: z.coerce.number().int().min(1).default(20),
  /** Per client address: requests refused before a signature is verified (400, 401, 413). */
  REFUSAL_LIMIT_PER_SECOND: z.coerce.number().positive().default(5),
  REFUSAL_LIMIT_BURST: z.coerce.number().int().min(1).default(50),
});
export type BankIngestConfig = z.infer<typeof BankIngestConfig>;

/** Room the spool needs beyond STATEMENT_SPOOL_MAX uploads of STATEMENT_MAX_BYTES: what else writes to the temporary folder. */
export const SPOOL_MARGIN_BYTES = 64 * 1024 * 1024;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): BankIngestConfig => load(BankIngestConfig, env);
