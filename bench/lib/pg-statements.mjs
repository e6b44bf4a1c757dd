import { round } from './stats.mjs';
import { withClient } from './system.mjs';

/**
 * Where PostgreSQL's time goes, statement by statement, when the server has pg_stat_statements
 * loaded (`shared_preload_libraries`, which takes a restart, so the bench never sets it: bench
 * README "Statement profile"). Resolves with undefined when it is not loaded or cannot be created
 * in this database. The extension is created in the bench's own database (dropped after the run),
 * and only that database's statements are reset and read.
 */
export async function statementProfiler(databaseUrl) {
  try {
    const loaded = await withClient(databaseUrl, async (c) => {
      const { rows } = await c.query("SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries'");
      if (!/\bpg_stat_statements\b/.test(rows[0]?.setting ?? '')) return false;
      await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      return true;
    });
    if (!loaded) return undefined;
  } catch (error) {
    // A database of someone else's (BENCH_DATABASE_URL) may not let this role create it: no profile then.
    console.error(`statement profile skipped: ${error.message}`);
    return undefined;
  }
  return {
    reset: () =>
      withClient(databaseUrl, (c) => c.query('SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)')),
    /**
     * The `limit` statements with the most execution (and, when tracked, planning) time, per
     * deposit, with their share of all. Planning is counted only where the server has
     * pg_stat_statements.track_planning on (off by default): `planningTracked` says which, and
     * `plannedShare` is then the share of calls that were planned.
     */
    top: (deposits, limit = 12) =>
      withClient(databaseUrl, async (c) => {
        const tracking = await c.query("SELECT setting FROM pg_settings WHERE name = 'pg_stat_statements.track_planning'");
        const { rows } = await c.query(
          `SELECT calls::float8, plans::float8, rows::float8, total_exec_time::float8 AS exec_ms, total_plan_time::float8 AS plan_ms,
                  left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
           ORDER BY total_exec_time + total_plan_time DESC`,
        );
        const all = rows.reduce((sum, r) => sum + r.exec_ms + r.plan_ms, 0);
        return {
          deposits,
          planningTracked: tracking.rows[0]?.setting === 'on',
          totalMsPerDeposit: round(all / deposits, 3),
          statements: rows.slice(0, limit).map((r) => ({
            query: r.query,
            callsPerDeposit: round(r.calls / deposits, 2),
            rowsPerCall: round(r.rows / Math.max(1, r.calls), 1),
            msPerCall: round((r.exec_ms + r.plan_ms) / Math.max(1, r.calls), 3),
            planMsPerCall: round(r.plan_ms / Math.max(1, r.calls), 3),
            // A prepared statement is planned at its first five executions and whenever its cached
            // plan is invalidated (a VACUUM or ANALYZE of a table it reads), or at every execution
            // while its plans for the values given look cheaper than the generic one.
            plannedShare: round(r.plans / Math.max(1, r.calls), 2),
            msPerDeposit: round((r.exec_ms + r.plan_ms) / deposits, 3),
            share: round((r.exec_ms + r.plan_ms) / all, 3),
          })),
        };
      }),
  };
}
