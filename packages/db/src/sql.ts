import { types, type Client, type Pool, type PoolClient, type QueryConfig } from 'pg';

/**
 * Plain SQL for the hot paths, on the same pg pool Prisma uses: named prepared statements whose
 * parameters are written by name (`sql`, `statement`), see docs/decisions/0025-sql-parameters-by-name.md.
 */

/** BIGINT (int8) columns come back as bigint, as Prisma gives them; pg's default is a string. */
const INT8_OID = 20;
const typeParsers: QueryConfig['types'] = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => BigInt(value) : types.getTypeParser(oid, format)) as NonNullable<QueryConfig['types']>['getTypeParser'],
};

/** A statement's parameter, by name: `sql` numbers it where it first appears and reuses the number. */
export interface Parameter {
  readonly parameter: string;
}

/** SQL text with its parameters not yet numbered: a statement, or a fragment of one. */
export interface SqlText {
  readonly sqlParts: readonly (string | Parameter)[];
}

/** What `sql` takes between its strings: a parameter, a fragment, or constant SQL text (never a value). */
export type SqlPart = Parameter | SqlText | string | number;

const isParameter = (part: SqlPart): part is Parameter => typeof part === 'object' && 'parameter' in part;

/** SQL text with parameters and fragments in it: ``sql`UPDATE orders SET status = ${p.status} WHERE id = ${p.orderId}` ``. */
export function sql(strings: TemplateStringsArray, ...parts: SqlPart[]): SqlText {
  const sqlParts: (string | Parameter)[] = [strings[0]!];
  parts.forEach((part, i) => {
    if (typeof part === 'object') sqlParts.push(...(isParameter(part) ? [part] : part.sqlParts));
    else sqlParts.push(String(part));
    sqlParts.push(strings[i + 1]!);
  });
  return { sqlParts };
}

/** SQL text without parameters (constants and column references only) as a string, for Prisma.raw. */
export function constantText({ sqlParts }: SqlText): string {
  return sqlParts
    .map((part) => {
      if (typeof part !== 'string') throw new TypeError(`constantText: the text has a parameter (${part.parameter})`);
      return part;
    })
    .join('');
}

/** Placeholders for the parameters `V` names: `p.orderId` stands for the value of `orderId`. */
export type Placeholders<V> = { readonly [K in keyof V & string]-?: Parameter };

const placeholders = new Proxy({}, { get: (_, name) => (typeof name === 'string' ? { parameter: name } : undefined) });

/** A row as a statement returns it, unless it says otherwise. */
export type Row = Record<string, unknown>;

/** No parameters. */
export type NoValues = Record<never, never>;

/**
 * A named prepared statement: PostgreSQL parses and plans it once per connection, then only binds
 * and executes it. Its parameters `V` are given by name; it returns rows `R`.
 */
export interface PreparedQuery<V = NoValues, R = Row> {
  readonly name: string;
  /** With `$1`, `$2` … in the order the parameters first appear. */
  readonly text: string;
  /** The parameters' names: `parameters[0]` is `$1`. */
  readonly parameters: readonly string[];
  /** The values of `parameters`, in their order. */
  bind(values: V): unknown[];
  /** Type only: the rows it returns. */
  readonly rowType?: R;
}

/**
 * A statement named `name` whose text `build` writes with `p`'s placeholders. The text is made
 * once, here, so it is the same at every execution, as a prepared statement's name requires.
 */
export function preparedQuery<V = NoValues, R = Row>(name: string, build: SqlText | ((p: Placeholders<V>) => SqlText)): PreparedQuery<V, R> {
  const { sqlParts } = typeof build === 'function' ? build(placeholders as Placeholders<V>) : build;
  const parameters: string[] = [];
  const text = sqlParts
    .map((part) => {
      if (typeof part === 'string') return part;
      const index = parameters.indexOf(part.parameter);
      return `$${index === -1 ? parameters.push(part.parameter) : index + 1}`;
    })
    .join('');
  const bind = (values: V): unknown[] =>
    parameters.map((parameter) => {
      const value = (values as Record<string, unknown>)[parameter];
      if (value === undefined) throw new TypeError(`statement ${name}: no value for ${parameter} (give null for NULL)`);
      return value;
    });
  return { name, text, parameters, bind };
}

/** One array per column of `T`, one element per row: the parameters of an `unnest(…)` that writes many rows. */
export type Columns<T> = { [K in keyof T]: T[K][] };

/** Rows, all with the same keys, as `Columns`; there must be one at least. */
export function columns<T extends object>(rows: readonly T[]): Columns<T> {
  const [first] = rows;
  if (first === undefined) throw new RangeError('columns of no rows');
  return Object.fromEntries(Object.keys(first).map((key) => [key, rows.map((row) => row[key as keyof T])])) as Columns<T>;
}

/** The values argument of a statement: none for one without parameters. */
export type ValuesOf<V> = keyof V extends never ? [values?: V] : [values: V];

/** What runs statements: the pool (each statement on its own, autocommit) or one transaction's connection. */
export interface Sql {
  rows<V, R>(statement: PreparedQuery<V, R>, ...values: ValuesOf<V>): Promise<R[]>;
  /** Rows changed by an INSERT, UPDATE or DELETE. */
  count<V, R>(statement: PreparedQuery<V, R>, ...values: ValuesOf<V>): Promise<number>;
}

const bound = <V>(s: PreparedQuery<V, unknown>, values: unknown[]): unknown[] => s.bind(values[0] as V);

class Runner implements Sql {
  constructor(private readonly target: Pool | PoolClient | Client) {}

  async rows<V, R>(s: PreparedQuery<V, R>, ...values: ValuesOf<V>): Promise<R[]> {
    return (await this.target.query({ name: s.name, text: s.text, values: bound(s, values), types: typeParsers })).rows as R[];
  }

  async count<V, R>(s: PreparedQuery<V, R>, ...values: ValuesOf<V>): Promise<number> {
    return (await this.target.query({ name: s.name, text: s.text, values: bound(s, values), types: typeParsers })).rowCount ?? 0;
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

/** Statements on the pool (each its own transaction) or on one connection. */
export function sqlOn(target: Pool | Client): Sql {
  return new Runner(target);
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
    rows: <V, R>(s: PreparedQuery<V, R>, ...values: ValuesOf<V>) => prisma.$queryRawUnsafe<R[]>(s.text, ...bound(s, values)),
    count: <V, R>(s: PreparedQuery<V, R>, ...values: ValuesOf<V>) => prisma.$executeRawUnsafe(s.text, ...bound(s, values)),
  };
}

/** A plain-SQL runner, or a Prisma client or transaction to run the statements through. */
export type SqlOrPrisma = Sql | PrismaRaw;

export function asSql(target: SqlOrPrisma): Sql {
  return 'rows' in target ? target : sqlIn(target);
}
