#!/usr/bin/env node
/**
 * Candidate lookup against table size: the matcher's own candidate statement (`readAmountCandidates`,
 * from its build) on one database whose orders grow from 1,000 to 1,000,000, with the same number
 * of matches per lookup at every size (one open and one expired order per bank account and
 * amount), so only the table grows. Prints the plan and the mean time per lookup at each size on
 * one quiet connection, as a ratio to the smallest size. The issue asks for it to stay flat.
 *
 *   node bench/candidate-scaling.mjs          (BENCH_SCALING_SIZES, default 1000,10000,100000,1000000)
 */
import pg from 'pg';
import { matcherCandidateLookup } from './lib/pipeline.mjs';
import { seedAccounts } from './lib/baseline.mjs';
import { createMigratedDatabase } from './lib/system.mjs';
import { round } from './lib/stats.mjs';

const SIZES = (process.env.BENCH_SCALING_SIZES ?? '1000,10000,100000,1000000').split(',').map(Number);
const ACCOUNTS = 20;
const LOOKUPS = 500;
const HOUR = 3_600_000;

/**
 * Orders number `from` to `to - 1`: order i is on account i % 20; each pair (2k, 2k + 1) on an
 * account shares an amount, the first open and the second expired; amounts never repeat otherwise.
 */
async function addOrders(client, orgId, accounts, from, to) {
  await client.query(
    `INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name,
                         ordered_at, expires_at, closed_at, payment_token, created_at, updated_at)
     SELECT 'ord_cs' || i, $1, 'live', ($2::text[])[(i % $3)::int + 1],
            CASE WHEN (i / $3) % 2 = 0 THEN 'open' ELSE 'expired' END,
            1000 + (i / $3) / 2, 'ﾔﾏﾀﾞ ﾀﾛｳ', 'cs-' || i, 'item', $4::timestamptz, $5::timestamptz,
            CASE WHEN (i / $3) % 2 = 0 THEN NULL ELSE $5::timestamptz END, md5('cs' || i), $4::timestamptz, $4::timestamptz
     FROM generate_series($6::bigint, $7::bigint - 1) AS g(i)`,
    [orgId, accounts, ACCOUNTS, new Date(Date.now() - 2 * HOUR), new Date(Date.now() - HOUR), from, to],
  );
  await client.query('ANALYZE orders');
}

async function measure(client, statement, accounts, size) {
  const pairs = Math.max(1, Math.floor(size / ACCOUNTS / 2));
  const lookup = (n) => {
    const k = (n * 7919) % pairs;
    return [accounts[n % ACCOUNTS], 1000 + k, new Date()];
  };
  const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, lookup(0));
  const nodes = [];
  const walk = (n) => {
    nodes.push(`${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(rows[0]['QUERY PLAN'][0].Plan);
  // Past the fifth run PostgreSQL may switch a prepared statement to its generic plan: warm up beyond it.
  for (let n = 0; n < 20; n++) await client.query({ name: statement.name, text: statement.text, values: lookup(n) });
  let found = 0;
  const started = performance.now();
  for (let n = 0; n < LOOKUPS; n++) found += (await client.query({ name: statement.name, text: statement.text, values: lookup(n) })).rowCount;
  return { meanMs: (performance.now() - started) / LOOKUPS, rowsPerLookup: found / LOOKUPS, plan: [...new Set(nodes)].join(' → ') };
}

const database = await createMigratedDatabase('pmatch_bench_scaling_');
const client = new pg.Client({ connectionString: database.url });
await client.connect();
try {
  const seeded = await seedAccounts(database.url, ACCOUNTS);
  const orgId = seeded[0].organisationId;
  const accounts = seeded.map((a) => a.id);
  const statement = matcherCandidateLookup();
  const results = [];
  let stored = 0;
  for (const size of SIZES) {
    const seeding = performance.now();
    await addOrders(client, orgId, accounts, stored, size);
    stored = size;
    // A new connection per size: its prepared statement is planned against the table as it now is.
    const probe = new pg.Client({ connectionString: database.url });
    await probe.connect();
    try {
      const result = await measure(probe, statement, accounts, size);
      results.push({ orders: size, ...result });
      console.log(
        `${size.toLocaleString('en')} orders (seeded in ${round((performance.now() - seeding) / 1000, 1)} s): ` +
          `${round(result.meanMs, 3)} ms per lookup, ${round(result.rowsPerLookup, 2)} rows, ×${round(result.meanMs / results[0].meanMs, 2)} of the smallest; ${result.plan}`,
      );
    } finally {
      await probe.end();
    }
  }
} finally {
  await client.end();
  await database.drop();
}
