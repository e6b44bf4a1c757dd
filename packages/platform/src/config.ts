import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * Environment shared by every service (docs/CONFIGURATION.md). Each service extends
 * it with its own keys; `loadConfig` fails fast with every problem listed, never with a secret.
 */
const DEVELOPMENT_SECRETS_KEY = 'dev-only-secrets-key-change-me';

/** Names Express's `trust proxy` knows for address ranges. */
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: whose X-Forwarded-For is believed for the client's address (rate limits per
 * address, the console's session and audit addresses). Empty (the default): nobody's, the address
 * is the connection's. A number N: the N nearest proxies (1 behind the Kubernetes ingress).
 * Otherwise a comma-separated list of proxy addresses, CIDR ranges or loopback, linklocal,
 * uniquelocal. `true` (everyone's) is refused: any client could then choose its own address.
 */
export const TrustProxySetting = z
  .string()
  .default('')
  .transform((value, ctx): false | number | string[] => {
    const text = value.trim();
    if (text === '' || text === '0' || text === 'false') return false;
    if (/^\d+$/.test(text)) return Number(text);
    const entries = text.split(',').map((entry) => entry.trim());
    const bad = entries.find((entry) => !RANGE_NAMES.includes(entry) && !ipaddr.isValid(entry) && !isCidr(entry));
    if (bad !== undefined) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(bad)} is not a number of proxies, an address, a CIDR range or ${RANGE_NAMES.join('/')}` });
      return z.NEVER;
    }
    return entries;
  });

function isCidr(text: string): boolean {
  try {
    ipaddr.parseCIDR(text);
    return true;
  } catch {
    return false;
  }
}

const milliseconds = (min: number, fallback: number) => z.coerce.number().int().min(min).default(fallback);

export const BaseConfig = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z.url().default('postgresql://postgres@127.0.0.1:5432/matching'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  RABBITMQ_URL: z.url().default('amqp://guest:guest@127.0.0.1:5672'),
  /** Prefix of every exchange and queue name, so tests can share one broker without crosstalk. */
  AMQP_PREFIX: z
    .string()
    .regex(/^[a-z0-9_.-]*$/)
    .default(''),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z.string().default('pmatch:'),
  PUBLIC_BASE_URL: z.url().default('http://localhost:3000'),
  /**
   * Seals secrets at rest (webhook, adapter and console TOTP secrets). Outside production a
   * development key stands in when it is unset; production refuses to start without one of its own.
   */
  SECRETS_KEY: z.string().min(16).default(DEVELOPMENT_SECRETS_KEY),
  /** Earlier keys, comma-separated: they still open what they sealed, never seal (key rotation). */
  SECRETS_KEYS_OLD: z
    .string()
    .default('')
    .transform((text) =>
      text
        .split(',')
        .map((key) => key.trim())
        .filter((key) => key !== ''),
    )
    .pipe(z.array(z.string().min(16, 'each key must be at least 16 characters'))),
  OUTBOX_POLL_INTERVAL_MS: z.coerce.number().int().min(10).default(200),
  TRUST_PROXY: TrustProxySetting,
  /** How long a client may take to send a request's headers (slow clients are cut off; at most HTTP_REQUEST_TIMEOUT_MS). */
  HTTP_HEADERS_TIMEOUT_MS: milliseconds(100, 10_000),
  /** How long a client may take to send a whole request, body included. */
  HTTP_REQUEST_TIMEOUT_MS: milliseconds(100, 60_000),
  /** Open connections a process takes at most; more are closed at once. */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(10_000),
  /** Open connections one peer address may hold at once (0: no bound per address). */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).default(1_000),
});
export type BaseConfig = z.infer<typeof BaseConfig>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig<T extends z.ZodObject>(schema: T, env: NodeJS.ProcessEnv = process.env): z.infer<T> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new ConfigError(`invalid configuration:\n${problems}`);
  }
  const config = result.data as { NODE_ENV?: string; SECRETS_KEY?: string };
  if (config.NODE_ENV === 'production' && (config.SECRETS_KEY === undefined || config.SECRETS_KEY === DEVELOPMENT_SECRETS_KEY)) {
    throw new ConfigError(
      'invalid configuration:\n  SECRETS_KEY: is required in production and has no default (16 characters or more, random, ' +
        'the same for every service and the ops CLI); it seals the secrets stored in the database',
    );
  }
  return result.data;
}
