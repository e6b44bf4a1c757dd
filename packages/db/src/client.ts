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
 * A Prisma client over a pg pool of our own, so the pool's 'error' event has a listener: pg emits
 * it when the server ends an idle connection (a restart, pg_terminate_backend), and an 'error'
 * with no listener would crash the process. The pool drops that connection and opens another.
 */
export function createPrisma(
  databaseUrl: string,
  options: { poolSize?: number; onIdleConnectionError?: (error: Error) => void } = {},
): PrismaClient {
  const pool = new Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  pool.on('error', (error) => options.onIdleConnectionError?.(error));
  // Prisma's default of 5 s per interactive transaction fails good work on a loaded machine; a
  // transaction that really hangs still ends, and its work is retried.
  return new PrismaClient({ adapter: new PrismaPg(pool), transactionOptions: { timeout: 30_000, maxWait: 10_000 } });
}

/** Postgres unique violation, as Prisma reports it through the driver adapter. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}
