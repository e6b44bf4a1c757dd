import autocannon from 'autocannon';
import pg from 'pg';
import { Pool } from 'undici';
import { CpuMeter } from './machine.mjs';
import { pgSnapshot } from './pgstats.mjs';
import { pushAtFixedRate } from './pipeline.mjs';
import { ratePerSecond, round, summarise } from './stats.mjs';

/**
 * POST /v1/orders and GET /v1/orders/{id} under rising concurrency with autocannon (in this
 * process), and between them, once `drain` has let the new orders' asynchronous work finish,
 * POST /v1/orders at a fixed offered rate. Every POST carries an external_id of its own, so each
 * one creates an order: a repeat would be answered from the existing order and measure something
 * else. With a `cpu` meter, each step also says how much CPU one request cost, by process; and
 * each says what PostgreSQL did per request, as counts that do not move with the machine's speed.
 */
export async function runApiPhase(system, config, log, cpu, drain) {
  const ops = await system.operator();
  const org = await ops.createOrganisation('API ベンチ', 'api-bench@example.com');
  const key = await ops.issueApiKey(org.id, 'test', 'api-bench');
  const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
  const steps = [];
  let counter = 0;
  const runTag = Date.now().toString(36);
  const newOrderBody = () => {
    counter += 1;
    return JSON.stringify({
      amount: 1000 + (counter % 90_000),
      payer_name: 'ヤマダ タロウ',
      external_id: `bench-${runTag}-${counter}`,
      item_name: 'お米 5kg',
      metadata: { bench: 'api' },
    });
  };
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
            setupRequest: (req) => ({ ...req, body: newOrderBody() }),
          },
        ],
      }),
    );
  }
  let fixedRate;
  if (config.apiFixedRate > 0 && config.apiFixedRateSeconds > 0) {
    await drain();
    log(`  POST /v1/orders at ${config.apiFixedRate}/s offered, open loop, ${config.apiFixedRateSeconds} s`);
    fixedRate = await postAtFixedRate(system, cpu, config.apiFixedRate, config.apiFixedRateSeconds, headers, newOrderBody);
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
  return { organisationId: org.id, ordersCreated: counter, steps, fixedRate };
}

/** The open-loop step's warm-up, before what it measures (`postAtFixedRate`). */
const WARM_UP_SECONDS = 1;

/** How many answers had each status (0: none). */
function statusCodes(answers) {
  const counts = {};
  for (const r of answers) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/**
 * POST /v1/orders in an open loop, as the pipeline's paced runs send notifications: request i is
 * due at start + i / rate and sent whether or not earlier ones were answered. Its latency is what
 * merchants sending that many orders per second would see. A closed loop of N connections
 * measures something else at saturation: each connection sends again the moment it is answered,
 * so the step's p99 is mostly the queue the load generator itself keeps full.
 *
 * The first `WARM_UP_SECONDS` at the rate are a warm-up, reported apart: in them the bench opens
 * the connections it needs (some tens at once), which the merchants of a running system have open
 * already. The figures, CPU and PostgreSQL counts are of the requests after it.
 */
async function postAtFixedRate(system, cpu, rate, seconds, headers, newOrderBody) {
  // undici rather than node:http: the load generator shares the machine's two cores with what it
  // measures, and undici's client took 0.11 ms of CPU per request here against node:http's 0.16.
  const pool = new Pool(system.apiUrl, { connections: 500, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const sender = {
    send: async () => {
      const body = newOrderBody();
      const sentAt = performance.now();
      try {
        const answer = await pool.request({ path: '/v1/orders', method: 'POST', headers, body });
        await answer.body.dump();
        return { sentAt, answeredAt: performance.now(), status: answer.statusCode };
      } catch {
        return { sentAt, answeredAt: performance.now(), status: 0 };
      }
    },
  };
  try {
    const warmUp = await pushAtFixedRate(sender, new Array(rate * WARM_UP_SECONDS).fill(null), rate);
    const pgBefore = await pgSnapshot(system.database.url);
    const cpuBefore = await cpu?.snapshot();
    const { results, heldBack, offeredSeconds } = await pushAtFixedRate(sender, new Array(rate * seconds).fill(null), rate);
    const cpuUsed = cpu === undefined ? undefined : CpuMeter.diff(cpuBefore, await cpu.snapshot());
    const pgAfter = await pgSnapshot(system.database.url);
    const answered = results.filter(Boolean);
    const warmUpAnswered = warmUp.results.filter(Boolean);
    const created = answered.filter((r) => r.status === 201);
    const latency = summarise(answered.map((r) => r.answeredAt - r.sentAt));
    return {
      name: 'POST /v1/orders',
      offeredRate: rate,
      seconds,
      requests: answered.length,
      created: created.length,
      requestsPerSecond: steadyRate(answered.map((r) => r.answeredAt)),
      offeredSeconds: round(offeredSeconds, 1),
      heldBack,
      latencyMs: { p50: latency.p50, p90: latency.p90, p99: latency.p99, max: latency.max, mean: latency.mean },
      statusCodes: statusCodes(answered),
      slowestWindows: slowestWindows(answered),
      warmUp: {
        seconds: WARM_UP_SECONDS,
        requests: warmUpAnswered.length,
        created: warmUpAnswered.filter((r) => r.status === 201).length,
        heldBack: warmUp.heldBack,
        statusCodes: statusCodes(warmUpAnswered),
        latencyMs: summarise(warmUpAnswered.map((r) => r.answeredAt - r.sentAt)),
      },
      cpuPerRequestMs: cpuUsed && answered.length > 0 ? CpuMeter.perItem(cpuUsed, answered.length) : undefined,
      postgresPerRequest: {
        transactions: round((pgAfter.database.xact_commit - pgBefore.database.xact_commit) / Math.max(1, answered.length), 2),
        walRecords: round((pgAfter.wal.records - pgBefore.wal.records) / Math.max(1, answered.length), 2),
      },
    };
  } finally {
    await pool.close();
  }
}

/**
 * The stretches of `WINDOW_MS` (by time sent) whose answers were slowest at the median, slowest
 * first, with when they were: a stall shows as a few of them in a row, to set beside the
 * PostgreSQL log (autovacuum's runs), a profile or another process's work at that time.
 */
function slowestWindows(answers, count = 5) {
  const WINDOW_MS = 100;
  const byWindow = new Map();
  for (const r of answers) {
    const window = Math.floor(r.sentAt / WINDOW_MS);
    if (!byWindow.has(window)) byWindow.set(window, []);
    byWindow.get(window).push(r.answeredAt - r.sentAt);
  }
  return [...byWindow]
    .map(([window, latencies]) => {
      const { p50, max } = summarise(latencies);
      return { at: new Date(performance.timeOrigin + window * WINDOW_MS).toISOString(), requests: latencies.length, p50, max };
    })
    .sort((a, b) => b.p50 - a.p50)
    .slice(0, count);
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

/**
 * Answers per second between the 10th and the 90th percentile of their times, as the pipeline's
 * steady rates: the rate kept up once running, without the start and the last answers' wait.
 */
function steadyRate(times) {
  const sorted = Float64Array.from(times).sort();
  const from = sorted[Math.floor(sorted.length * 0.1)];
  const to = sorted[Math.floor(sorted.length * 0.9)];
  const within = sorted.filter((t) => t >= from && t <= to).length;
  return ratePerSecond(within - 1, from, to);
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
