import { BaseConfig, loadConfig as load } from '@pmatch/platform';
import { z } from 'zod';

export const MatcherConfig = BaseConfig.extend({
  MATCHER_PORT: z.coerce.number().int().min(0).max(65535).default(3002),
  /** /healthz, /readyz and /metrics; never routed from outside. */
  MATCHER_ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(9102),
  MATCHER_PREFETCH: z.coerce.number().int().min(1).max(1000).default(50),
  /** Longer than any decision takes; if a holder stalls past it, the database still guards. */
  LOCK_TTL_MS: z.coerce.number().int().min(100).default(15_000),
  LOCK_WAIT_MS: z.coerce.number().int().min(100).default(30_000),
  EXPIRY_SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).default(1000),
  PENDING_SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).default(15_000),
  /** How often processed messages older than 30 days are forgotten (platform INBOX_RETENTION_MS). */
  RETENTION_INTERVAL_MS: z.coerce.number().int().min(10).default(3_600_000),
});
export type MatcherConfig = z.infer<typeof MatcherConfig>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): MatcherConfig => load(MatcherConfig, env);
