import pg from 'pg';
import { round, sleep } from './stats.mjs';

/**
 * PostgreSQL's own counters for the bench database, before and after a phase: transactions
 * committed, per table sequential scans, index scans and rows written, and the server's WAL
 * (records, full-page images, bytes). Divided by the number of deposits they show the database
 * work one deposit costs (and a sequential scan on a big table shows a missing index) without
 * pg_stat_statements, which needs a server restart to load.
 */
export async function pgSnapshot(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Backends flush their counters at most once a second; give the last ones time to land.
    await sleep(1200);
    await client.query('SELECT pg_stat_clear_snapshot()');
    const db = await client.query(
      `SELECT xact_commit::float8, xact_rollback::float8, tup_returned::float8, tup_fetched::float8, tup_inserted::float8,
              tup_updated::float8, tup_deleted::float8, blks_read::float8, blks_hit::float8
       FROM pg_stat_database WHERE datname = current_database()`,
    );
    const tables = await client.query(
      `SELECT relname, seq_scan::float8, seq_tup_read::float8, coalesce(idx_scan, 0)::float8 AS idx_scan,
              n_tup_ins::float8, n_tup_upd::float8, n_tup_hot_upd::float8,
              autovacuum_count::float8, autoanalyze_count::float8
       FROM pg_stat_user_tables`,
    );
    const indexes = await client.query('SELECT indexrelname, idx_scan::float8 FROM pg_stat_user_indexes');
    // The server's, not the database's: the WAL has no per-database counters.
    const wal = await client.query('SELECT wal_records::float8 AS records, wal_fpi::float8 AS fpi, wal_bytes::float8 AS bytes FROM pg_stat_wal');
    return {
      database: db.rows[0],
      wal: wal.rows[0],
      tables: Object.fromEntries(tables.rows.map((r) => [r.relname, r])),
      indexes: Object.fromEntries(indexes.rows.map((r) => [r.indexrelname, r.idx_scan])),
    };
  } finally {
    await client.end();
  }
}

/** What happened between two snapshots, per deposit; tables and indexes with no activity left out. */
export function pgPerDeposit(before, after, deposits) {
  const per = (v) => round(v / deposits, 2);
  const database = {};
  for (const k of Object.keys(after.database)) database[k] = per(after.database[k] - (before.database[k] ?? 0));
  const tables = {};
  for (const [name, row] of Object.entries(after.tables)) {
    const prev = before.tables[name] ?? {};
    const d = {};
    for (const k of ['seq_scan', 'seq_tup_read', 'idx_scan', 'n_tup_ins', 'n_tup_upd', 'n_tup_hot_upd']) d[k] = per(row[k] - (prev[k] ?? 0));
    if (Object.values(d).some((v) => v !== 0)) tables[name] = d;
  }
  // Counts, not per deposit: how often autovacuum visited each table during the phase.
  const autovacuum = {};
  for (const [name, row] of Object.entries(after.tables)) {
    const prev = before.tables[name] ?? {};
    const vacuums = row.autovacuum_count - (prev.autovacuum_count ?? 0);
    const analyses = row.autoanalyze_count - (prev.autoanalyze_count ?? 0);
    if (vacuums + analyses > 0) autovacuum[name] = { vacuums, analyses };
  }
  const indexes = {};
  for (const [name, scans] of Object.entries(after.indexes)) {
    const d = per(scans - (before.indexes[name] ?? 0));
    if (d !== 0) indexes[name] = d;
  }
  const wal = Object.fromEntries(Object.entries(after.wal).map(([k, v]) => [k, per(v - before.wal[k])]));
  return { deposits, database, wal, tables, autovacuum, indexes };
}
