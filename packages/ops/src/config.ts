import { BaseConfig } from '@pmatch/platform';
import { z } from 'zod';

/**
 * Only the keys the CLI uses: an operator fixing an organisation must not be stopped by a broker
 * or Redis URL this process never opens. PUBLIC_BASE_URL makes the payment_url of a shop order.
 * NODE_ENV=production makes SECRETS_KEY required and the database role checked, as in the services.
 */
export const OpsConfig = BaseConfig.pick({ NODE_ENV: true, DATABASE_URL: true, SECRETS_KEY: true, SECRETS_KEYS_OLD: true, PUBLIC_BASE_URL: true });
export type OpsConfig = z.infer<typeof OpsConfig>;

/** Read only by a command that talks to the matcher (`shop-order pay`), when it does. */
export const MatcherLinkConfig = BaseConfig.pick({ RABBITMQ_URL: true, AMQP_PREFIX: true }).extend({
  /** How long to wait for the matcher's answer; the same key and default as orders-api's. */
  COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
});
export type MatcherLinkConfig = z.infer<typeof MatcherLinkConfig>;
