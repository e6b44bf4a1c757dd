import { WEBHOOK_LIMITS } from '@pmatch/contracts';
import { AllowedCidrsSetting, BaseConfig, DNS_LOOKUP_TIMEOUT_MS, INBOX_RETENTION_MS, isNameServer, loadConfig as load } from '@pmatch/platform';
import { z } from 'zod';

/**
 * What a delivery's lease must outlast besides the answer deadline: writing the attempt's outcome
 * (one statement, or one short transaction) after the answer came. A lease that ran out before
 * that write would let another dispatcher send the same attempt again.
 */
export const LEASE_MARGIN_MS = 2_000;

const DAY_MS = 24 * 3600_000;

/** An unset variable and an empty one mean the same: not configured. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

export const DispatcherConfig = BaseConfig.extend({
  WEBHOOK_DISPATCHER_PORT: z.coerce.number().int().min(0).max(65535).default(3003),
  /** /healthz, /readyz and /metrics; never routed from outside. */
  WEBHOOK_DISPATCHER_ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(9103),
  DISPATCHER_PREFETCH: z.coerce.number().int().min(1).max(1000).default(50),
  /** Ranges exempt from the public-address rule: test receivers on loopback only. */
  WEBHOOK_ALLOWED_CIDRS: AllowedCidrsSetting,
  /** Name servers for webhook hosts (`ip`, `ip:port`, `[ipv6]:port`, comma-separated); unset: the system's. */
  WEBHOOK_DNS_SERVERS: z
    .string()
    .default('')
    .transform((text) =>
      text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    )
    .refine((servers) => servers.every(isNameServer), 'must be IP addresses, each with an optional port (1.2.3.4:53, [2001:db8::1]:53)'),
  /** A webhook host's lookup is cancelled, and the attempt fails, after this. */
  WEBHOOK_DNS_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(DNS_LOOKUP_TIMEOUT_MS),
  /** Host lookups one organisation may have in flight; more wait for a free one within the lookup deadline. */
  WEBHOOK_DNS_LOOKUPS_PER_ORGANISATION: z.coerce.number().int().min(1).max(100).default(4),
  /** A PEM file of one more CA to trust, for test receivers whose certificate a test CA issued. */
  WEBHOOK_CA_FILE: optional(z.string()),
  /** Where owners' notices go out (smtp:// or smtps://). Required in production. */
  SMTP_URL: optional(z.url({ protocol: /^smtps?$/ })),
  /** Without SMTP_URL (development and tests), each notice is written here as an .eml file; relative to the working directory. */
  MAIL_DIR: z.string().min(1).default('.tmp/mail'),
  WEBHOOK_EMAIL_FROM: z.string().min(3).default('Payment matching <no-reply@localhost>'),
  /** Answer deadline of a receiver (10 s); tests shorten it. */
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(50).max(WEBHOOK_LIMITS.responseTimeoutMs).default(WEBHOOK_LIMITS.responseTimeoutMs),
  /**
   * How long a claimed delivery is reserved for the process that claimed it. If that process dies
   * mid-delivery, the delivery is due again after this; it must outlast the answer deadline and the
   * write of the outcome (LEASE_MARGIN_MS), or a slow receiver would be sent the same attempt twice.
   */
  DELIVERY_LEASE_MS: z.coerce.number().int().min(100).default(60_000),
  DELIVERY_POLL_INTERVAL_MS: z.coerce.number().int().min(10).default(1000),
  /** Attempts in flight in this process, in all and per endpoint (so one hanging endpoint cannot hold every slot). */
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  DELIVERY_CONCURRENCY_PER_ENDPOINT: z.coerce.number().int().min(1).max(100).default(4),
  EMAIL_POLL_INTERVAL_MS: z.coerce.number().int().min(10).default(10_000),
  /** How often delivery logs older than 30 days are looked for and deleted. */
  RETENTION_INTERVAL_MS: z.coerce.number().int().min(10).default(3_600_000),
  /** How often the event sweep looks for recorded events whose event.recorded message never arrived. */
  EVENT_SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).default(30_000),
  /** An event is swept once it was recorded this long ago (its message normally arrives within seconds). */
  EVENT_SWEEP_GRACE_MS: z.coerce.number().int().min(1000).default(120_000),
  /**
   * How far back a newly started dispatcher sweeps (3 days). Below the inbox's retention by a day at
   * least: an older event's inbox row may be forgotten, and sweeping it would deliver it again.
   */
  EVENT_SWEEP_LOOKBACK_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .max(INBOX_RETENTION_MS - DAY_MS)
    .default(3 * DAY_MS),
})
  .refine((c) => c.DELIVERY_LEASE_MS >= c.DELIVERY_TIMEOUT_MS + LEASE_MARGIN_MS, {
    message: `must be at least DELIVERY_TIMEOUT_MS + ${LEASE_MARGIN_MS} ms (the answer deadline and the time to record the outcome)`,
    path: ['DELIVERY_LEASE_MS'],
  })
  .refine((c) => c.NODE_ENV !== 'production' || c.WEBHOOK_ALLOWED_CIDRS.length === 0, {
    message: 'is for test receivers only and must be unset in production',
    path: ['WEBHOOK_ALLOWED_CIDRS'],
  })
  .refine((c) => c.NODE_ENV !== 'production' || c.SMTP_URL !== undefined, {
    message: "must be set in production (smtp:// or smtps://): owners' e-mails go out through it; without it they would only be written to MAIL_DIR",
    path: ['SMTP_URL'],
  })
  .refine((c) => c.NODE_ENV !== 'production' || c.WEBHOOK_CA_FILE === undefined, {
    message: 'is for test receivers only and must be unset in production',
    path: ['WEBHOOK_CA_FILE'],
  })
  .refine((c) => c.EVENT_SWEEP_GRACE_MS < c.EVENT_SWEEP_LOOKBACK_MS, {
    message: 'must be shorter than EVENT_SWEEP_LOOKBACK_MS',
    path: ['EVENT_SWEEP_GRACE_MS'],
  });
export type DispatcherConfig = z.infer<typeof DispatcherConfig>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): DispatcherConfig => load(DispatcherConfig, env);
