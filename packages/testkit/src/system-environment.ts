import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RABBITMQ_URL, REDIS_URL, freePort, type TestDatabase } from './infra';

export const SERVICES = ['orders-api', 'bank-ingest', 'matcher', 'webhook-dispatcher'] as const;
export type ServiceName = (typeof SERVICES)[number];

export const PORT_VARIABLE: Record<ServiceName, string> = {
  'orders-api': 'ORDERS_API_PORT',
  'bank-ingest': 'BANK_INGEST_PORT',
  matcher: 'MATCHER_PORT',
  'webhook-dispatcher': 'WEBHOOK_DISPATCHER_PORT',
};

/** Each service's admin port (/healthz, /readyz, /metrics). */
export const ADMIN_PORT_VARIABLE: Record<ServiceName, string> = {
  'orders-api': 'ORDERS_API_ADMIN_PORT',
  'bank-ingest': 'BANK_INGEST_ADMIN_PORT',
  matcher: 'MATCHER_ADMIN_PORT',
  'webhook-dispatcher': 'WEBHOOK_DISPATCHER_ADMIN_PORT',
};

/** The database role each process connects as (migration 20261122020000_service_roles). */
export const DATABASE_ROLE: Record<ServiceName | 'ops', string> = {
  'orders-api': 'pmatch_orders_api',
  'bank-ingest': 'pmatch_bank_ingest',
  matcher: 'pmatch_matcher',
  'webhook-dispatcher': 'pmatch_webhook_dispatcher',
  ops: 'pmatch_ops',
};

export function databaseUrlAs(url: string, role: string): string {
  const withRole = new URL(url);
  withRole.username = role;
  withRole.password = '';
  return withRole.toString();
}

/** How many processes of each service a TestSystem runs (1 unless given). */
export type Replicas = Partial<Record<ServiceName, number>>;

/** A replica's name in logs and in `replicaPids()`: the service's, with `#n` when it runs several. */
export type ReplicaLabel = ServiceName | `${ServiceName}#${number}`;

/** The public and admin port of each replica of each service, replica n at index n - 1. */
export type ReplicaPorts = Record<ServiceName, { port: number; adminPort: number }[]>;

/** Free ports for every replica of every service (`replicas`: how many of each, 1 unless given). */
export async function replicaPortsFor(replicas: Replicas): Promise<ReplicaPorts> {
  const counts = SERVICES.map((s) => {
    const n = replicas[s] ?? 1;
    if (!Number.isInteger(n) || n < 1) throw new Error(`replicas of ${s} must be a whole number from 1, not ${n}`);
    return [s, n] as const;
  });
  return Object.fromEntries(
    await Promise.all(
      counts.map(async ([s, n]) => [s, await Promise.all(Array.from({ length: n }, async () => ({ port: await freePort(), adminPort: await freePort() })))]),
    ),
  ) as ReplicaPorts;
}

/**
 * The services' environment under test, with replica 1's ports: their own database, AMQP and Redis
 * prefix, a clock file (TEST_CLOCK_FILE) at offset 0, limits per address out of the way; `extraEnv` wins.
 */
export function testEnvironment(database: TestDatabase, prefix: string, replicaPorts: ReplicaPorts, extraEnv: Record<string, string>): Record<string, string> {
  const ports = Object.fromEntries(
    SERVICES.flatMap((s) => [
      [PORT_VARIABLE[s], String(replicaPorts[s][0]!.port)],
      [ADMIN_PORT_VARIABLE[s], String(replicaPorts[s][0]!.adminPort)],
    ]),
  );
  const clockFile = join(mkdtempSync(join(tmpdir(), 'pmatch-clock-')), 'offset-ms');
  writeFileSync(clockFile, '0');
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    TEST_CLOCK_FILE: clockFile,
    // E-mails of a system without SMTP_URL land beside its clock, removed with it.
    MAIL_DIR: join(clockFile, '..', 'mail'),
    EXPIRY_SWEEP_INTERVAL_MS: '100',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: '5',
    RABBITMQ_URL,
    AMQP_PREFIX: prefix,
    REDIS_URL,
    REDIS_PREFIX: `pmatch-test:${prefix}`,
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.ORDERS_API_PORT}`,
    SECRETS_KEY: 'test-secrets-key-0123456789',
    OUTBOX_POLL_INTERVAL_MS: '50',
    // Tests send many requests, refused ones among them, from one address; the limits per
    // address are tested with lower ones.
    REFUSAL_LIMIT_PER_SECOND: '1000000',
    REFUSAL_LIMIT_BURST: '1000000',
    CONSOLE_LIMIT_PER_SECOND: '1000000',
    CONSOLE_LIMIT_BURST: '1000000',
    // A request no cached secret verifies re-reads the adapters at once: an adapter a test has
    // just created is known to bank-ingest from its first request.
    ADAPTER_MISS_REFRESH_MS: '0',
    ...ports,
    ...extraEnv,
  };
  return env;
}
