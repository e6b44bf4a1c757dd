#!/usr/bin/env node
/**
 * `pnpm bench`: measures the API, the deposit pipeline and the bare infrastructure under it, on
 * this machine, and writes bench-results/<run>.json and .md. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import amqp from 'amqplib';
import { bestSteps, runApiPhase } from './lib/api.mjs';
import { amqpBaseline, httpsBaseline, pgBaseline } from './lib/baseline.mjs';
import { HOT_ACCOUNT_RUNS, TWO_MATCHER_RUNS, loadBenchConfig } from './lib/config.mjs';
import { CpuMeter, describeMachine, peakRssMiB, postgresPidsOf } from './lib/machine.mjs';
import { statementProfiler } from './lib/pg-statements.mjs';
import { pgPerDeposit, pgSnapshot } from './lib/pgstats.mjs';
import { DEPLOYED_SETTINGS, applyServerSettings } from './lib/postgres-settings.mjs';
import {
  BacklogSampler,
  NotificationSender,
  analyseRun,
  arrivalsByTransaction,
  checkOutcomes,
  collectDecisions,
  expectedEvents,
  latencyDrift,
  stages,
  planPipeline,
  probeCandidateLookup,
  pushAsFastAsAccepted,
  pushAtFixedRate,
  configureMatching,
  seedOrders,
  setUpMerchants,
} from './lib/pipeline.mjs';
import { TestCa, WebhookReceiver } from './lib/receiver.mjs';
import { runConsolePhase } from './lib/console.mjs';
import { TARGETS, writeResults } from './lib/report.mjs';
import { runStatementsPhase } from './lib/statements.mjs';
import { round, waitForProgress, waitUntil } from './lib/stats.mjs';
import { BenchSystem, INFRA, REPO_ROOT, assertBuilt, withTimeout } from './lib/system.mjs';

const RAISED_RATE_LIMIT = '1000000';
/** The pipeline's runs offered at a fixed rate: their latency is judged, with its stages. */
const PACED_RUNS = new Set(['fixedRate', 'lowRate', 'afterBurst', 'hotAccountFixedRate']);
/** Every check that failed; any makes the run exit non-zero (CI runs the smoke form for exactly this). */
const failures = [];
const startedAt = Date.now();
const log = (message) => console.log(`[bench ${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${message}`);

async function main() {
  // Every setting is an environment variable; an argument (`--help` included) is refused before
  // anything starts, rather than taken for a full run that changes the server's settings.
  const args = process.argv.slice(2);
  if (args.length > 0) {
    console.error(`bench takes no arguments (got: ${args.join(' ')}); its settings are environment variables, listed in bench/README.md "Settings"`);
    process.exitCode = 2;
    return;
  }
  const config = loadBenchConfig();
  assertBuilt();
  const runId = `${new Date(startedAt).toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(2).toString('hex')}`;
  const server = config.serverSettings === 'deployed' && !config.external ? await applyServerSettings(INFRA.adminDatabaseUrl, DEPLOYED_SETTINGS) : undefined;
  if (server === undefined) return measure(config, runId, {});
  // Ctrl-C or a kill must put the server's settings back too, then end the run as the signal would.
  const interrupted = (signal) => void server.restore().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await measure(config, runId, server.changed);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await server.restore();
  }
}

async function measure(config, runId, serverChanged) {
  const result = {
    runId,
    startedAt: new Date(startedAt).toISOString(),
    config: { ...config, external: config.external ? { apiUrl: config.external.apiUrl, ingestUrl: config.external.ingestUrl } : undefined },
    targets: TARGETS,
    machine: await describeMachine(INFRA),
    phases: {},
    notes: [],
    failures,
  };
  log(
    `scale ${config.scale}: ${config.orders} orders, ${config.notifications} notifications, fixed rate ${config.fixedRate}/s for ${config.fixedRateSeconds} s (and ${config.afterBurstSeconds} s after the burst) and ${config.lowRate}/s for ${config.lowRateSeconds} s, API ${config.apiSeconds} s × [${config.apiConnections}] connections; phases ${config.phases.join(', ')}`,
  );
  log(
    `machine: ${result.machine.nproc} cores ${result.machine.cpuModel}, ${result.machine.memoryGiB} GiB, load ${result.machine.loadAverageAtStart.join(' ')}`,
  );
  const changes = Object.entries(serverChanged).map(([name, { from, to }]) => `${name} ${from} → ${to}`);
  if (changes.length > 0) {
    log(`PostgreSQL set as deployed for this run (put back afterwards): ${changes.join(', ')}`);
    result.notes.push(
      `PostgreSQL ran as docs/CONFIGURATION.md asks for this run only (ALTER SYSTEM, put back afterwards): ${changes.join(', ')}. BENCH_PG_SETTINGS=as-is leaves the server alone.`,
    );
  }

  const ca = TestCa.create();
  const receiver = await WebhookReceiver.start(ca.issueServerCertificate());
  let system;
  let cpu;
  try {
    if (config.phases.includes('baseline')) {
      // First, on a machine the services do not load yet.
      result.phases.baseline = await runBaseline(config, receiver, ca);
    }
    const profileDir = config.profile ? join(REPO_ROOT, 'bench-results', 'profiles', runId) : undefined;
    log(config.external ? 'using the running services given by BENCH_API_URL / BENCH_INGEST_URL' : 'starting the four services');
    system = await BenchSystem.start({
      external: config.external,
      profileDir,
      keepDatabase: config.keepDatabase,
      extraEnv: {
        RATE_LIMIT_PER_SECOND: RAISED_RATE_LIMIT,
        RATE_LIMIT_BURST: RAISED_RATE_LIMIT,
        CONSOLE_LIMIT_PER_SECOND: RAISED_RATE_LIMIT,
        CONSOLE_LIMIT_BURST: RAISED_RATE_LIMIT,
        WEBHOOK_CA_FILE: ca.certFile,
        WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      },
    });
    if (config.external) {
      result.notes.push(
        'Services were already running (BENCH_API_URL etc.): their rate limit, pool sizes and webhook trust are whatever they were started with.',
      );
    } else {
      result.notes.push(
        `The bench started the services with RATE_LIMIT_PER_SECOND=RATE_LIMIT_BURST=${RAISED_RATE_LIMIT} and the console's CONSOLE_LIMIT_PER_SECOND=CONSOLE_LIMIT_BURST the same (the limiters still run, one Redis call per request each), WEBHOOK_CA_FILE (the bench's test CA) and WEBHOOK_ALLOWED_CIDRS=127.0.0.0/8; every other setting at its default (DATABASE_POOL_SIZE 10 per service, ORDER_WRITE_GATHER_MS 2, MATCHER_PREFETCH 50, DELIVERY_CONCURRENCY 64, 4 per endpoint).`,
      );
    }
    if (profileDir)
      result.notes.push(
        `CPU profiles (--cpu-prof) in ${profileDir}; profiling slows the services, so these figures are not comparable with an unprofiled run.`,
      );
    cpu = new CpuMeter(system.pids(), postgresPidsOf(INFRA.adminDatabaseUrl, [system.database.name]));

    if (config.phases.includes('pipeline')) {
      result.phases.pipeline = await runPipeline(config, system, config.external ? undefined : receiver, cpu, runId);
    }
    if (config.phases.includes('api')) {
      result.phases.api = await runApi(config, system, cpu);
    }
    if (config.phases.includes('statements')) {
      if (config.external) result.notes.push("The statements step needs the services the bench starts (it reads bank-ingest's memory); skipped.");
      else result.phases.statements = await withTimeout(runStatementsPhase(config, system, log, failures), 30 * 60_000, 'the statements step');
    }
    if (config.phases.includes('console') && !config.external) {
      result.phases.console = await withTimeout(runConsolePhase(system, config, log), 15 * 60_000, 'the console phase');
    }
    result.peakRssMiB = Object.fromEntries(Object.entries(system.pids()).map(([name, pid]) => [name, peakRssMiB(pid)]));
    const crashed = system.crashed();
    for (const c of crashed) result.failures.push(`service ${c.name} exited (${c.exitCode}) during the run: ${c.output.slice(-500)}`);
  } finally {
    cpu?.stop();
    log('stopping');
    if (system && !system.external) result.serviceLogs = saveServiceLogs(system, runId);
    await system?.stop().catch((e) => result.failures.push(`stopping the services failed: ${e.message}`));
    await receiver.close();
    ca.remove();
  }

  result.ratios = ratios(result);
  result.durationSeconds = (Date.now() - startedAt) / 1000;
  result.notes.push(
    'The machine is shared: other test runs may have used CPU at the same time; the load average at start and the machine-busy share per phase are recorded in the JSON.',
  );
  const { markdown, written } = writeResults(REPO_ROOT, result, config.updateDocs);
  console.log(`\n${markdown}`);
  log(`wrote ${written.join(', ')}`);
}

/** The services' last output lines (warnings and errors at the bench's log level), kept beside the results. */
function saveServiceLogs(system, runId) {
  const dir = join(REPO_ROOT, 'bench-results', `${runId}-logs`);
  mkdirSync(dir, { recursive: true });
  const files = {};
  for (const name of system.processNames()) {
    const text = system.logs(name);
    if (text === '') continue;
    writeFileSync(join(dir, `${name}.log`), text);
    files[name] = join('bench-results', `${runId}-logs`, `${name}.log`);
  }
  return files;
}

async function runBaseline(config, receiver, ca) {
  const baseline = {};
  log(`baseline: raw pg + Redis lock, ${config.baselineDeposits} deposits over ${config.accounts} accounts with ${config.orders} open orders`);
  baseline.pg = await withTimeout(pgBaseline(config), 10 * 60_000, 'the pg baseline');
  log(`  ${baseline.pg.depositsPerSecond} deposits/s (machine ${baseline.pg.cpu.machineBusyPercent} % busy)`);
  baseline.pgAsync = await withTimeout(pgBaseline(config, { synchronousCommit: 'off' }), 10 * 60_000, 'the pg baseline without commit flushes');
  log(`  ${baseline.pgAsync.depositsPerSecond} deposits/s with synchronous_commit=off (for comparison only)`);
  log(`baseline: RabbitMQ, ${config.amqpMessages} messages`);
  baseline.amqp = await withTimeout(amqpBaseline(config), 3 * 60_000, 'the AMQP baseline');
  log(`  ${baseline.amqp.publishConfirmedPerSecond} msg/s published, ${baseline.amqp.endToEndPerSecond} msg/s consumed`);
  log(`baseline: HTTPS POSTs to the receiver, ${config.httpsRequests} requests`);
  baseline.https = await withTimeout(httpsBaseline(config, receiver, ca.caPem, 16), 2 * 60_000, 'the HTTPS baseline');
  log(`  ${baseline.https.requestsPerSecond} POST/s`);
  return baseline;
}

async function runPipeline(config, system, receiver, cpu, runId) {
  const out = {
    orders: config.orders,
    accounts: config.accounts,
    organisations: config.organisations,
    mix: `${config.mix.confirmed * 100} % exact match → confirmed, ${config.mix.held * 100} % two candidates → held, ${config.mix.unmatched * 100} % no order → unmatched`,
    checks: {},
  };
  if (!receiver) out.webhooksNotMeasured = "the running dispatcher was not started by the bench, so it does not trust the bench receiver's test CA";
  log(`pipeline: setting up ${config.organisations} merchants, ${config.accounts} live accounts${receiver ? ', webhook endpoints' : ''}`);
  const merchants = await setUpMerchants(system, config, receiver);
  const plan = planPipeline(config, merchants.accounts, runId, merchants.hotAccount);
  log(`pipeline: seeding ${plan.orders.length} open orders (${plan.targeted} of them targeted by notifications)`);
  const seeded = await seedOrders(system.database.url, plan.orders);
  await configureMatching(system.database.url, merchants, config.matching);
  out.matching =
    config.matching === 'learning' ? 'every rule; a third of confirmed deposits paid by a transfer code, a third by a taught payer' : 'the four name rules';
  out.seedSeconds = seeded.seconds;
  log(`  seeded in ${seeded.seconds} s`);
  out.candidateLookup = await probeCandidateLookup(system.database.url, plan.orders);
  log(`  candidate lookup: ${out.candidateLookup.plan}, ${out.candidateLookup.meanMs} ms`);
  const sender = new NotificationSender(system.ingestUrl, merchants.adapter, Math.max(config.pushConcurrency, 64));
  const sampler = new BacklogSampler(system.database.url, config.external ? undefined : system.env.AMQP_PREFIX);
  await sampler.start();
  const statements = await statementProfiler(system.database.url);
  let expectedWebhooks = 0;
  try {
    // Warm-up: unmatched deposits (they need no orders) so connections, pools and the JIT are ready.
    const warmup = plan.runs.throughput.notifications
      .filter((n) => n.kind === 'unmatched')
      .slice(0, Math.min(500, Math.ceil(config.notifications / 20)))
      // An amount of its own: one of the run's deposits with its amount, name and day would be its possible duplicate.
      .map((n, i) => ({ ...n, amount: 8_000_000 + i, reference: `bench-${runId}-warmup-${i}` }));
    log(`pipeline: warm-up with ${warmup.length} notifications`);
    const warmupResults = await pushAsFastAsAccepted(sender, warmup, 8, Date.now() + 60_000);
    const warmupDecisions = await collectDecisions(system.database.url, `bench-${runId}-warmup-`, warmup.length);
    expectedWebhooks += warmup.length;
    recordCheck(out, 'warm-up', warmup, warmupResults, warmupDecisions, { confirmed: 0, held: 0, unmatched: warmup.length });
    if (receiver) await waitForWebhooks(receiver, expectedWebhooks, out, 'warm-up');

    // How each run sends and what it is called; they go in the plan's order (`runSizes`).
    const burst = async (list) => ({ results: await pushAsFastAsAccepted(sender, list, config.pushConcurrency, Date.now() + 30 * 60_000) });
    const runs = {
      fixedRate: [`fixed rate ${config.fixedRate}/s`, (list) => pushAtFixedRate(sender, list, config.fixedRate)],
      // A rate the system can keep up with, for the latency of an unsaturated pipeline.
      lowRate: [`fixed rate ${config.lowRate}/s`, (list) => pushAtFixedRate(sender, list, config.lowRate)],
      throughput: ['as fast as accepted', burst],
      afterBurst: [`fixed rate ${config.fixedRate}/s right after the burst`, (list) => pushAtFixedRate(sender, list, config.fixedRate)],
      hotAccount: ['one account, as fast as accepted', burst],
      hotAccountFixedRate: [`one account, fixed rate ${config.fixedRate}/s`, (list) => pushAtFixedRate(sender, list, config.fixedRate)],
      twoMatchersThroughput: ['two matchers, as fast as accepted', burst],
      twoMatchersHotAccount: ['two matchers, one account, as fast as accepted', burst],
    };
    for (const [key, run] of Object.entries(plan.runs)) {
      const [label, push] = runs[key];
      if (run.notifications.length === 0) continue;
      if (TWO_MATCHER_RUNS.has(key)) {
        if (config.external) {
          out.twoMatchersNotMeasured = 'the services were already running: the bench starts no second matcher beside them';
          continue;
        }
        if (!system.replicaStarted('matcher')) {
          log('pipeline: starting a second matcher');
          await system.startReplica('matcher');
          cpu.pids = system.pids();
        }
      }
      log(`pipeline: ${label}, ${run.notifications.length} notifications`);
      const pgBefore = await pgSnapshot(system.database.url);
      await statements?.reset();
      const cpuBefore = await cpu.snapshot();
      const { results, heldBack, offeredSeconds } = await push(run.notifications);
      const accepted = results.filter((r) => r?.status === 202).length;
      log(`  ${accepted} accepted; waiting for the decisions`);
      const decisions = await collectDecisions(system.database.url, run.referencePrefix, accepted);
      const rowsByReference = recordCheck(out, label, run.notifications, results, decisions, run.sent);
      let arrivals;
      // The hot account's merchant has no webhook endpoint.
      if (receiver && !HOT_ACCOUNT_RUNS.has(key)) {
        expectedWebhooks += expectedEvents(run.sent);
        await waitForWebhooks(receiver, expectedWebhooks, out, label);
        arrivals = arrivalsByTransaction(await receiver.arrivals());
      }
      const cpuAfter = await cpu.snapshot();
      const pgAfter = await pgSnapshot(system.database.url);
      const analysed = analyseRun({ notifications: run.notifications, results, rowsByReference, arrivalsByTransaction: arrivals, sent: run.sent });
      analysed.backlog = sampler.maxima(analysed.window.firstSent, analysed.window.lastWebhook ?? analysed.window.lastDecided ?? Date.now());
      analysed.cpu = CpuMeter.diff(cpuBefore, cpuAfter);
      analysed.cpuPerDeposit = CpuMeter.perItem(analysed.cpu, accepted);
      analysed.postgresPerDeposit = pgPerDeposit(pgBefore, pgAfter, accepted);
      // Read before the run after it resets it: the statement profile is of this run alone.
      if (statements) analysed.statements = await statements.top(accepted);
      if (PACED_RUNS.has(key)) {
        analysed.offeredRate = key === 'lowRate' ? config.lowRate : config.fixedRate;
        analysed.drift = latencyDrift(run.notifications, results, rowsByReference);
        analysed.stages = stages(run.notifications, results, rowsByReference);
        // Sends delayed because the in-flight cap was reached: the offer fell behind the schedule.
        analysed.openLoop = { heldBack, offeredSeconds: round(offeredSeconds, 1) };
      }
      out[key] = analysed;
      log(
        `  ${analysed.rates.decisionsPerSecondSteady} decisions/s steady, 202→decision p50 ${analysed.latencyMs.decisionFromAccepted.p50} ms p99 ${analysed.latencyMs.decisionFromAccepted.p99} ms` +
          (analysed.rates.webhooksPerSecondSteady !== undefined ? `, ${analysed.rates.webhooksPerSecondSteady} webhooks/s steady` : ''),
      );
    }
    if (receiver) {
      // Every event the receiver got, by type: anything beyond the deposits' own shows up here.
      const types = {};
      let withoutDeposit = 0;
      for (const [, type, transactionId] of await receiver.arrivals()) {
        types[type] = (types[type] ?? 0) + 1;
        if (transactionId === null) withoutDeposit += 1;
      }
      out.webhookEvents = { byType: types, withoutDeposit };
    }
  } finally {
    sender.close();
    await sampler.stop();
  }
  if (out.throughput) {
    out.cpuPerDeposit = out.throughput.cpuPerDeposit;
    out.backlog = out.throughput.backlog;
  }
  return out;
}

function recordCheck(out, label, notifications, results, decisions, sent) {
  const rowsByReference = new Map(decisions.rows.map((r) => [r.bank_reference, r]));
  const { counts, mismatches } = checkOutcomes(notifications, results, rowsByReference);
  const rejected = results.filter((r) => r?.status !== 202).length;
  const retried = results.filter((r) => r?.refusals?.length > 0).length;
  out.checks[label] = { sent, counts, mismatches: mismatches.length, examples: mismatches, rejected, retried, timedOut: decisions.timedOut };
  const okCounts = counts.confirmed === sent.confirmed && counts.held === sent.held && counts.unmatched === sent.unmatched;
  if (!okCounts || mismatches.length > 0 || rejected > 0) {
    out.failed = true;
    failures.push(
      `${label}: sent ${JSON.stringify(sent)}, decided ${JSON.stringify(counts)}, ${rejected} not accepted, ${mismatches.length} mismatch(es)` +
        (mismatches.length ? `, e.g. ${JSON.stringify(mismatches[0])}` : '') +
        (decisions.timedOut ? ' (timed out waiting for decisions)' : ''),
    );
  }
  return rowsByReference;
}

/** Distinct events received before the current run, so each run's check counts its own. */
let receivedBefore = 0;
let expectedBefore = 0;

async function waitForWebhooks(receiver, expected, out, label) {
  await waitForProgress(async () => (await receiver.counts()).unique, expected, { intervalMs: 250 });
  const counts = await receiver.counts();
  out.checks[label].webhooks = `${expected - expectedBefore} / ${counts.unique - receivedBefore}`;
  receivedBefore = counts.unique;
  expectedBefore = expected;
  out.checks[label].webhookSignatures = {
    verified: counts.verified,
    failed: counts.verifyFailures,
    repeats: counts.repeats,
    tlsConnectionsSoFar: counts.connections,
  };
  if (counts.unique < expected) failures.push(`${label}: ${expected} webhook events expected by now, ${counts.unique} received`);
  if (counts.verifyFailures > 0) failures.push(`${label}: ${counts.verifyFailures} webhook signature(s) did not verify`);
}

async function runApi(config, system, cpu) {
  log('api: autocannon steps');
  const cpuBefore = await cpu.snapshot();
  const api = await runApiPhase(system, config, log, cpu, () => drainBacklog(system));
  const cpuAfter = await cpu.snapshot();
  // A 5xx, or (the open-loop step's code 0) no answer at all.
  const failedAnswers = (s) =>
    Object.entries(s.statusCodes)
      .filter(([code]) => code.startsWith('5') || code === '0')
      .reduce((n, [, c]) => n + c, 0);
  for (const s of api.steps) {
    log(
      `  ${s.name} ×${s.connections}: ${s.requestsPerSecond} req/s, p50 ${s.latencyMs.p50} ms, p99 ${s.latencyMs.p99} ms, errors ${s.errors}, non-2xx ${s.non2xx}`,
    );
    if (failedAnswers(s) > 0) failures.push(`${s.name} ×${s.connections}: ${failedAnswers(s)} responses with a 5xx status`);
  }
  const fr = api.fixedRate;
  if (fr) {
    log(
      `  ${fr.name} at ${fr.offeredRate}/s offered: ${fr.requestsPerSecond} req/s steady, p50 ${fr.latencyMs.p50} ms, p99 ${fr.latencyMs.p99} ms, ${fr.created} of ${fr.offeredRate * fr.seconds} created, held back ${fr.heldBack}`,
    );
    for (const part of [fr, fr.warmUp]) {
      if (failedAnswers(part) > 0)
        failures.push(
          `${fr.name} at ${fr.offeredRate}/s offered${part === fr ? '' : ', warm-up'}: ${failedAnswers(part)} requests answered with a 5xx status or not at all`,
        );
    }
  }
  const best = bestSteps(api.steps, 'POST /v1/orders', TARGETS.postOrdersP99Ms);
  log('api: waiting for the asynchronous work behind the new orders to drain');
  const drain = await drainBacklog(system);
  return {
    ...api,
    seconds: config.apiSeconds,
    rateLimit: config.external ? 'as configured' : RAISED_RATE_LIMIT,
    best,
    cpu: CpuMeter.diff(cpuBefore, cpuAfter),
    drain,
  };
}

/** Waits (bounded) until the outbox is published and the queues behind order creation are empty. */
async function drainBacklog(system) {
  if (system.external) return undefined;
  const started = Date.now();
  const connection = await amqp.connect(INFRA.rabbitmqUrl);
  const channel = await connection.createChannel();
  let timedOut = false;
  try {
    await waitUntil(
      async () => {
        const [{ unpublished }] = await system.sql('SELECT count(*)::int AS unpublished FROM outbox WHERE published_at IS NULL');
        let queued = 0;
        for (const q of ['matcher.late-orders', 'webhook-dispatcher.events'])
          queued += (await channel.checkQueue(`${system.env.AMQP_PREFIX}${q}`)).messageCount;
        return unpublished === 0 && queued === 0 ? true : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 500, what: 'the order backlog' },
    );
  } catch {
    timedOut = true;
  } finally {
    await connection.close();
  }
  return { seconds: round((Date.now() - started) / 1000, 1), timedOut };
}

function ratios(result) {
  const base = result.phases.baseline;
  const tp = result.phases.pipeline?.throughput;
  if (!base || !tp) return {};
  const decisions = tp.rates.decisionsPerSecondSteady;
  // deposit.received plus the one event.recorded announcing the events its decision records.
  const messagesPerDeposit = 2;
  const r = { messagesPerDeposit };
  if (base.pg?.depositsPerSecond) r.decisionsToPg = round(decisions / base.pg.depositsPerSecond, 3);
  if (base.amqp?.endToEndPerSecond) {
    r.amqpMessagesPerSecond = round(decisions * messagesPerDeposit);
    r.amqpToBaseline = round(r.amqpMessagesPerSecond / base.amqp.endToEndPerSecond, 3);
  }
  if (base.pg?.depositsPerSecond && base.amqp?.endToEndPerSecond) {
    // Both run on the same two cores: a deposit costs the pg work plus its messages' broker work.
    r.compositeDepositsPerSecond = round(1 / (1 / base.pg.depositsPerSecond + messagesPerDeposit / base.amqp.endToEndPerSecond));
    r.decisionsToComposite = round(decisions / r.compositeDepositsPerSecond, 3);
  }
  if (base.https?.requestsPerSecond && tp.rates.webhooksPerSecondSteady !== undefined) {
    r.webhooksToHttps = round(tp.rates.webhooksPerSecondSteady / base.https.requestsPerSecond, 3);
  }
  return r;
}

main()
  .then(() => undefined)
  .catch((error) => {
    console.error(`bench failed: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => {
    if (failures.length > 0) {
      console.error(`bench: ${failures.length} check(s) failed:\n  ${failures.join('\n  ')}`);
      process.exitCode = 1;
    }
    // Anything still holding the event loop (a stuck socket) must not keep CI waiting.
    setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref();
  });
