import { asSql, sql, preparedQuery, type PrismaClient, type Sql, type SqlOrPrisma } from '@pmatch/db';
import { waitFor } from './infra';

/** A node of PostgreSQL's JSON plan (`EXPLAIN (FORMAT JSON)`). */
export type PlanNode = Record<string, unknown>;

/**
 * The services prepare each statement once per connection: PostgreSQL plans it for the values
 * given at first and may keep a generic plan, made without them, after five executions. A test of
 * a statement's plan checks both.
 */
export const PLAN_CACHE_MODES = ['force_custom_plan', 'force_generic_plan'] as const;
export type PlanCacheMode = (typeof PLAN_CACHE_MODES)[number];

/**
 * How PostgreSQL plans `text` prepared, under `mode`, for `values` (SQL literals written into
 * EXECUTE's text, which takes no bind parameters), after `SET LOCAL` of each of `settings` (such
 * as `enable_seqscan = off`). EXPLAIN without ANALYZE runs nothing, a DELETE included.
 */
export async function preparedPlan(prisma: PrismaClient, text: string, values: string, mode: PlanCacheMode, settings: string[] = []): Promise<PlanNode> {
  return prisma.$transaction(async (tx) => {
    for (const setting of [...settings, `plan_cache_mode = ${mode}`]) await tx.$executeRawUnsafe(`SET LOCAL ${setting}`);
    await tx.$executeRawUnsafe(`PREPARE plan_check AS ${text}`);
    const rows = await tx.$queryRawUnsafe<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(`EXPLAIN (FORMAT JSON) EXECUTE plan_check(${values})`);
    await tx.$executeRawUnsafe('DEALLOCATE plan_check');
    return rows[0]!['QUERY PLAN'][0]!.Plan;
  });
}

/** Every node of a JSON plan, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...((node.Plans as PlanNode[] | undefined) ?? []).flatMap(planNodes)];
}

const rowsRead = preparedQuery<{ table: string }, { read: number }>(
  'testkit.rows_read_in_transaction',
  (p) => sql`SELECT (COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0))::int AS read FROM pg_stat_xact_user_tables WHERE relname = ${p.table}`,
);

/**
 * The rows of `table` the caller's transaction has read so far, by sequential scans and index
 * fetches (pg_stat_xact_user_tables): what a test of a statement's cost counts, since a plan's
 * shape alone does not say how much of an index it walks.
 */
export async function rowsReadInTransaction(tx: SqlOrPrisma, table: string): Promise<number> {
  const [row] = await asSql(tx).rows(rowsRead, { table });
  return row!.read;
}

/**
 * `sql` that also notes the name of every statement it runs, in order, in `names`: what a test of
 * round trips counts (a batch written in one statement, a read that must not happen).
 */
export function notingQueries(db: Sql, names: string[]): Sql {
  return {
    rows(s, ...values) {
      names.push(s.name);
      return db.rows(s, ...values);
    },
    count(s, ...values) {
      names.push(s.name);
      return db.count(s, ...values);
    },
  };
}

const lockWaits = preparedQuery<{ queryLike: string }, { n: number }>(
  'testkit.lock_waits',
  (p) => sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${p.queryLike}`,
);

/**
 * Waits until a statement of this database whose text is LIKE `queryLike` waits for a lock: what a
 * test of a write that must wait for another's waits on, rather than a sleep that assumes it.
 */
export async function statementWaitingForALock(db: SqlOrPrisma, queryLike: string): Promise<void> {
  await waitFor(async () => ((await asSql(db).rows(lockWaits, { queryLike }))[0]!.n > 0 ? true : undefined), {
    what: `a statement like '${queryLike}' to wait for a lock`,
  });
}
