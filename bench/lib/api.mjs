import autocannon from 'autocannon';
import pg from 'pg';
import { CpuMeter } from './machine.mjs';
import { pgSnapshot } from './pgstats.mjs';
import { round } from './stats.mjs';

/**
 * POST /v1/orders and GET /v1/orders/{id} under rising concurrency with autocannon (in this
 * process). Every POST carries an external_id of its own, so each one creates an order: a repeat
 * would be answered from the existing order and measure something else. With a `cpu` meter, each
 * step also says how much CPU one request cost, by process; and each says what PostgreSQL did per
 * request, as counts that do not move with the machine's speed.
 */
export async function runApiPhase(system, config, log, cpu) {
  const ops = await system.operator();
  const org = await ops.createOrganisation('API ベンチ', 'api-bench@example.com');
  const key = await ops.issueApiKey(org.id, 'test', 'api-bench');
  const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
  const steps = [];
  let counter = 0;
  const runTag = Date.now().toString(36);
  for (const connections of config.apiConnections) {
    log(`  POST /v1/orders, ${connections} connection(s), ${config.apiSeconds} s`);
    steps.push(
      await cannon(system, cpu, 'POST /v1/orders', connections, config.apiSeconds, {
        url: system.apiUrl,
        headers,
        requests: [
          {
            method: 'POST',
            path: '/v1/orders',
            setupRequest: (req) => {
              counter += 1;
              return {
                ...req,
                body: JSON.stringify({
                  amount: 1000 + (counter % 90_000),
                  payer_name: 'ヤマダ タロウ',
                  external_id: `bench-${runTag}-${counter}`,
                  item_name: 'お米 5kg',
                  metadata: { bench: 'api' },
                }),
              };
            },
          },
        ],
      }),
    );
  }
  const ids = await orderIds(system, org.id, 2_000);
  if (ids.length === 0) throw new Error('no orders were created by the POST steps; cannot run the GET steps');
  let read = 0;
  for (const connections of config.apiConnections) {
    log(`  GET /v1/orders/{id}, ${connections} connection(s), ${config.apiSeconds} s`);
    steps.push(
      await cannon(system, cpu, 'GET /v1/orders/{id}', connections, config.apiSeconds, {
        url: system.apiUrl,
        headers: { authorization: headers.authorization },
        requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/v1/orders/${ids[read++ % ids.length]}` }) }],
      }),
    );
  }
  return { organisationId: org.id, ordersCreated: counter, steps };
}

async function cannon(system, cpu, name, connections, seconds, options) {
  const pgBefore = await pgSnapshot(system.database.url);
  const cpuBefore = await cpu?.snapshot();
  const result = await autocannon({ ...options, connections, duration: seconds, timeout: 10 });
  const cpuUsed = cpu === undefined ? undefined : CpuMeter.diff(cpuBefore, await cpu.snapshot());
  const pgAfter = await pgSnapshot(system.database.url);
  const perRequest = (v) => (result.requests.total > 0 ? round(v / result.requests.total, 2) : undefined);
  const codes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  return {
    name,
    connections,
    seconds,
    requests: result.requests.total,
    requestsPerSecond: round(result.requests.average),
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: round(result.latency.average, 2),
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: codes,
    // The asynchronous work a request causes (a new order's late-order check, its event) counts as
    // far as it ran within the step: the drain after the last step shows how little is left over.
    cpuPerRequestMs: cpuUsed && result.requests.total > 0 ? CpuMeter.perItem(cpuUsed, result.requests.total) : undefined,
    // Transactions committed in the bench database (read-only ones included) and WAL records of
    // the whole server, per request, counting the asynchronous work done by the snapshot after.
    postgresPerRequest: {
      transactions: perRequest(pgAfter.database.xact_commit - pgBefore.database.xact_commit),
      walRecords: perRequest(pgAfter.wal.records - pgBefore.wal.records),
    },
  };
}

async function orderIds(system, organisationId, limit) {
  const client = new pg.Client({ connectionString: system.database.url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT id FROM orders WHERE organisation_id = $1 ORDER BY random() LIMIT $2', [organisationId, limit]);
    return rows.map((r) => r.id);
  } finally {
    await client.end();
  }
}

/** The best POST figure that meets the latency target, and the best at all. */
export function bestSteps(steps, name, p99LimitMs) {
  const of = steps.filter((s) => s.name === name);
  const byRate = (a, b) => b.requestsPerSecond - a.requestsPerSecond;
  const clean = (s) => s.errors === 0 && s.timeouts === 0 && s.non2xx === 0;
  return {
    withinLatency: of.filter((s) => clean(s) && s.latencyMs.p99 < p99LimitMs).sort(byRate)[0],
    fastest: of.filter(clean).sort(byRate)[0],
  };
}
