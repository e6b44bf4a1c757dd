import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { Prisma, PrismaClient } from './generated/prisma/client';
import { inTransaction, sqlOn, type Sql } from './sql';

export { Prisma, PrismaClient };
export type {
  ApiKey as ApiKeyRow,
  BankAccount as BankAccountRow,
  BankAdapter as BankAdapterRow,
  Event as EventRow,
  Order as OrderRow,
  Organisation as OrganisationRow,
  PaymentLink as PaymentLinkRow,
  PayerAlias as PayerAliasRow,
  User as UserRow,
  ConsoleSession as ConsoleSessionRow,
  AuditLog as AuditLogRow,
  Setting as SettingRow,
  Transaction as TransactionRow,
  WebhookDelivery as WebhookDeliveryRow,
  WebhookEndpoint as WebhookEndpointRow,
} from './generated/prisma/client';

/** The client inside `prisma.$transaction(async (tx) => …)`. */
export type Tx = Prisma.TransactionClient;
export type Db = PrismaClient | Tx;

/** A Prisma client over a pg pool of our own (see `createDatabase`). */
export function createPrisma(databaseUrl: string, options: DatabaseOptions = {}): PrismaClient {
  return createDatabase(databaseUrl, options).prisma;
}

export interface DatabaseOptions {
  poolSize?: number;
  onIdleConnectionError?: (error: Error) => void;
}

/**
 * A service's database: Prisma for most of its work, and plain SQL (`sql`, `transaction`) on the
 * same pool for its hot paths (see sql.ts). `prisma.$disconnect()` ends the pool too.
 */
export interface Database {
  prisma: PrismaClient;
  /** Statements on the pool, each its own transaction. */
  sql: Sql;
  /** Runs `work` in one database transaction (COMMIT on success, ROLLBACK on a throw). */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
}

/** How long a caller waits for a free pooled connection before the work fails as transient (503). */
const POOL_WAIT_MS = 10_000;

export function createDatabase(databaseUrl: string, options: DatabaseOptions = {}): Database {
  const pool = new Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10, connectionTimeoutMillis: POOL_WAIT_MS });
  pool.on('error', (error) => options.onIdleConnectionError?.(error));
  // pg emits 'error' on a client whose connection the server ended, and the pool and the Prisma
  // adapter listen only while each holds it: a FATAL read in between would be an uncaught
  // exception. Every client keeps a listener for its whole life; the query in flight still fails.
  pool.on('connect', (client) => client.on('error', () => undefined));
  // Prisma's default of 5 s per interactive transaction fails good work on a loaded machine; a
  // transaction that really hangs still ends, and its work is retried.
  const prisma = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    transactionOptions: { timeout: 30_000, maxWait: POOL_WAIT_MS },
  });
  return { prisma, sql: sqlOn(pool), transaction: (work) => inTransaction(pool, work) };
}

/**
 * Postgres unique violation (SQLSTATE 23505), as Prisma reports it through the driver adapter (P2002
 * from a model query; P2010, "raw query failed", with the adapter's cause from a statement that
 * `sqlIn` runs in a Prisma transaction) or pg directly.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (error.code === 'P2002') return true;
    const cause = (error.meta?.driverAdapterError as { cause?: { kind?: unknown } } | undefined)?.cause;
    return error.code === 'P2010' && cause?.kind === 'UniqueConstraintViolation';
  }
  return error instanceof Error && (error as { code?: unknown }).code === '23505';
}

/**
 * SQLSTATE classes and codes that say the database could not do the work right now, not that the
 * work was wrong: connection exceptions (08), operator intervention such as a restart or
 * pg_terminate_backend (57), too many connections (53300), and a serialization failure or
 * deadlock (40001, 40P01). The same request may succeed when retried.
 */
const TRANSIENT_SQLSTATE = /^(08|57)|^(53300|40001|40P01)$/;

/**
 * Prisma codes with that meaning: P1001 the server cannot be reached, P1017 it closed the
 * connection, P2024 no pooled connection in time, P2028 a transaction could not start in time
 * (the pool is exhausted under load).
 */
const TRANSIENT_PRISMA_CODES = new Set(['P1001', 'P1017', 'P2024', 'P2028']);

/** Socket errors on the way to the server. */
const SOCKET_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);

/** pg's own errors for a connection that broke under a query. */
const BROKEN_CONNECTION_MESSAGES = [
  'Connection terminated',
  'connection error and is not queryable',
  'Client was closed',
  // pg's pool: no connection freed up within connectionTimeoutMillis (overload).
  'timeout exceeded when trying to connect',
];

/**
 * Whether an error means the database was briefly unavailable (overload, restart, failover, a cut
 * connection), so that the caller should be told to retry (503) rather than that we failed (500).
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (TRANSIENT_PRISMA_CODES.has(error.code)) return true;
    return isTransientDriverCause((error.meta?.driverAdapterError as { cause?: unknown } | undefined)?.cause);
  }
  if (error instanceof Prisma.PrismaClientInitializationError) return true;
  if (!(error instanceof Error)) return false;
  // The adapter's own error, which reaches us unwrapped when a transaction's statement or commit fails.
  if (error.name === 'DriverAdapterError') return isTransientDriverCause(error.cause);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (TRANSIENT_SQLSTATE.test(code) || SOCKET_ERROR_CODES.has(code))) return true;
  return BROKEN_CONNECTION_MESSAGES.some((m) => error.message.includes(m));
}

/** The driver adapter's description of a failure (`@prisma/driver-adapter-utils` Error): transient? */
function isTransientDriverCause(cause: unknown): boolean {
  const { kind, code } = (cause ?? {}) as { kind?: unknown; code?: unknown };
  if (kind === 'DatabaseNotReachable' || kind === 'TooManyConnections') return true;
  return kind === 'postgres' && typeof code === 'string' && TRANSIENT_SQLSTATE.test(code);
}
