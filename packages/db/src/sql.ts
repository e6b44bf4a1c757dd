import { types, type Pool, type PoolClient, type QueryConfig, type QueryResultRow } from 'pg';

/**
 * Plain SQL for the hot paths, on the same pg pool Prisma uses. Prisma stays the schema's source
 * of truth and the client of everything else; but its client costs about 1 ms of CPU per statement
 * and 1.5 ms per interactive transaction on our 2-core machines, against 0.2 ms and 0.3 ms for the
 * same work through pg (docs/BENCHMARKS.md, "Profile"). A deposit, an order or a webhook delivery
 * is a handful of statements, so on those paths the difference is most of the CPU.
 */

/** BIGINT (int8) columns come back as bigint, as Prisma gives them; pg's default is a string. */
const INT8_OID = 20;
const typeParsers: QueryConfig['types'] = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => BigInt(value) : types.getTypeParser(oid, format)) as NonNullable<QueryConfig['types']>['getTypeParser'],
};

/**
 * A statement with a name: PostgreSQL parses and plans it once per connection, then only binds
 * and executes it. The name must be unique to the text.
 */
export interface Statement {
  name: string;
  text: string;
}

export function statement(name: string, text: string): Statement {
  return { name, text };
}

/** What runs statements: the pool (each statement on its own, autocommit) or one transaction's connection. */
export interface Sql {
  rows<R extends QueryResultRow>(statement: Statement, values?: unknown[]): Promise<R[]>;
  /** Rows changed by an INSERT, UPDATE or DELETE. */
  count(statement: Statement, values?: unknown[]): Promise<number>;
}

class Runner implements Sql {
  constructor(private readonly target: Pool | PoolClient) {}

  async rows<R extends QueryResultRow>(s: Statement, values: unknown[] = []): Promise<R[]> {
    return (await this.target.query<R>({ name: s.name, text: s.text, values, types: typeParsers })).rows;
  }

  async count(s: Statement, values: unknown[] = []): Promise<number> {
    return (await this.target.query({ name: s.name, text: s.text, values, types: typeParsers })).rowCount ?? 0;
  }
}

/**
 * Runs `work` in one database transaction on one pooled connection: COMMIT when it resolves,
 * ROLLBACK when it throws. A connection whose ROLLBACK failed is in an unknown state (usually
 * broken), so it is destroyed rather than returned to the pool.
 */
export async function inTransaction<T>(pool: Pool, work: (tx: Sql) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(new Runner(client));
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/** Statements on the pool, each its own transaction. */
export function sqlOn(pool: Pool): Sql {
  return new Runner(pool);
}

/** The raw-query methods of a Prisma client or of its interactive transaction. */
interface PrismaRaw {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

/**
 * The same statements inside a Prisma transaction, so that a writer written once in SQL (events,
 * outbox) serves both the hot paths and the Prisma code around them. Prisma's raw queries parse
 * BIGINT as bigint too.
 */
export function sqlIn(prisma: PrismaRaw): Sql {
  return {
    rows: <R extends QueryResultRow>(s: Statement, values: unknown[] = []) => prisma.$queryRawUnsafe<R[]>(s.text, ...values),
    count: (s: Statement, values: unknown[] = []) => prisma.$executeRawUnsafe(s.text, ...values),
  };
}

/** A plain-SQL runner, or a Prisma client or transaction to run the statements through. */
export type SqlOrPrisma = Sql | PrismaRaw;

export function asSql(target: SqlOrPrisma): Sql {
  return 'rows' in target ? target : sqlIn(target);
}
