import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { Prisma, PrismaClient } from './generated/prisma/client';

export { Prisma, PrismaClient };
export type {
  ApiKey as ApiKeyRow,
  BankAccount as BankAccountRow,
  BankAdapter as BankAdapterRow,
  Event as EventRow,
  Order as OrderRow,
  Organisation as OrganisationRow,
  Setting as SettingRow,
  Transaction as TransactionRow,
  WebhookDelivery as WebhookDeliveryRow,
  WebhookEndpoint as WebhookEndpointRow,
} from './generated/prisma/client';

/** The client inside `prisma.$transaction(async (tx) => …)`. */
export type Tx = Prisma.TransactionClient;
export type Db = PrismaClient | Tx;

/**
 * A Prisma client over a pg pool of our own, so that PostgreSQL ending a connection (a restart, a
 * failover, pg_terminate_backend) never crashes the process. pg emits 'error' on the client whose
 * connection ended, and an 'error' with no listener is an uncaught exception. The pool listens on
 * idle clients only, and the Prisma adapter only while it holds a client; in between (the pool has
 * handed the client to a waiting `connect()`, the adapter attaches a microtask later) a FATAL that
 * came in the same socket read as the last query's answer finds nobody listening. So every client
 * gets a listener of its own for its whole life. The query in flight still fails with the error,
 * and the pool drops the client and opens another.
 */
export function createPrisma(
  databaseUrl: string,
  options: { poolSize?: number; onIdleConnectionError?: (error: Error) => void } = {},
): PrismaClient {
  const pool = new Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  pool.on('error', (error) => options.onIdleConnectionError?.(error));
  pool.on('connect', (client) => client.on('error', () => undefined));
  // Prisma's default of 5 s per interactive transaction fails good work on a loaded machine; a
  // transaction that really hangs still ends, and its work is retried.
  return new PrismaClient({ adapter: new PrismaPg(pool), transactionOptions: { timeout: 30_000, maxWait: 10_000 } });
}

/** Postgres unique violation, as Prisma reports it through the driver adapter. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}
