import { AllowedCidrsSetting, BaseConfig, loadConfig as load } from '@pmatch/platform';
import { z } from 'zod';

export const OrdersApiConfig = BaseConfig.extend({
  ORDERS_API_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** /healthz, /readyz and /metrics; never routed from outside. */
  ORDERS_API_ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(9100),
  /** How long a request waits for the matcher or bank-ingest before answering 503. */
  COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * Under load, how long new orders (without an Idempotency-Key) wait for others to join their
   * statement after the one before it committed; 0 writes them at once (see `BatchWriter`).
   */
  ORDER_WRITE_GATHER_MS: z.coerce.number().int().min(0).max(50).default(2),
  RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(100),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
  /** Per client address: requests refused as unauthenticated on /v1 (401) or for an unknown payment page (404). */
  REFUSAL_LIMIT_PER_SECOND: z.coerce.number().positive().default(5),
  REFUSAL_LIMIT_BURST: z.coerce.number().int().min(1).default(50),
  /** Per client address: every request under /dashboard. */
  CONSOLE_LIMIT_PER_SECOND: z.coerce.number().positive().default(20),
  CONSOLE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
  /**
   * Orders one address may make at payment links in a burst, and again per hour after it: the
   * links are public, so this keeps a stranger from filling a link's use limit or its merchant's orders.
   */
  PAYMENT_LINK_ORDERS_PER_HOUR: z.coerce.number().int().min(1).default(20),
  /** How often records past their retention (events 30 days, idempotency keys 24 h) are deleted. */
  RETENTION_SWEEP_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(60 * 60 * 1000),
  /**
   * How long a dedicated transfer account given to one order rests after that order closed (paid,
   * canceled, expired) before another order gets it: a late or second transfer from the first
   * buyer then finds no other buyer's order on it. 30 days.
   */
  DEDICATED_ACCOUNT_REST_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(30 * 24 * 60 * 60 * 1000),
  /** Ranges exempt from the public-address rule for webhook URLs: test receivers only. */
  WEBHOOK_ALLOWED_CIDRS: AllowedCidrsSetting,
}).refine((c) => c.NODE_ENV !== 'production' || c.WEBHOOK_ALLOWED_CIDRS.length === 0, {
  message: 'is for test receivers only and must be empty in production',
  path: ['WEBHOOK_ALLOWED_CIDRS'],
});
export type OrdersApiConfig = z.infer<typeof OrdersApiConfig>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): OrdersApiConfig => load(OrdersApiConfig, env);
