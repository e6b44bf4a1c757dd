import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { consoleMarkdown } from './console.mjs';
import { round } from './stats.mjs';

export const TARGETS = {
  postOrdersPerSecond: 1500,
  postOrdersP99Ms: 50,
  decisionsPerSecond: 500,
  decisionP99MsAt200: 200,
  webhooksPerSecond: 500,
  baselineFraction: 1 / 3,
};

const fmt = (v, digits = 0) =>
  v === undefined || v === null || Number.isNaN(v) ? '—' : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ms = (v) => (v === undefined || v === null ? '—' : `${fmt(v, v < 10 ? 1 : 0)} ms`);
const verdict = (ok) => (ok === 'reported' ? 'reported' : ok === undefined ? 'not measured' : ok ? '**met**' : '**missed**');

/** The figures the issue sets targets for, each next to its target, from a finished result. */
export function targetRows(result) {
  const rows = [];
  const api = result.phases.api;
  const best = api?.best;
  const closedLoop = best
    ? best.withinLatency
      ? `closed loop: ${fmt(best.withinLatency.requestsPerSecond)}/s at ${best.withinLatency.connections} conn., p99 ${ms(best.withinLatency.latencyMs.p99)}` +
        (best.fastest && best.fastest !== best.withinLatency ? `; peak ${fmt(best.fastest.requestsPerSecond)}/s (p99 ${ms(best.fastest.latencyMs.p99)})` : '')
      : best.fastest
        ? `closed loop: no step had p99 < ${TARGETS.postOrdersP99Ms} ms; peak ${fmt(best.fastest.requestsPerSecond)}/s (p99 ${ms(best.fastest.latencyMs.p99)})`
        : 'closed loop: no clean step'
    : undefined;
  const paced = api?.fixedRate;
  rows.push({
    target: `POST /v1/orders ≥ ${fmt(TARGETS.postOrdersPerSecond)}/s with p99 < ${TARGETS.postOrdersP99Ms} ms`,
    measured: api
      ? [
          paced
            ? `at ${fmt(paced.offeredRate)}/s offered (open loop, ${paced.seconds} s): ${fmt(paced.requestsPerSecond)}/s answered steady, p50 ${ms(paced.latencyMs.p50)}, p99 ${ms(paced.latencyMs.p99)}, ` +
              `${fmt(paced.created)} of ${fmt(paced.offeredRate * paced.seconds)} created${paced.heldBack > 0 ? `, held back ${paced.heldBack} times` : ''}`
            : undefined,
          closedLoop,
        ]
          .filter(Boolean)
          .join('; ')
      : 'not measured',
    ok: api
      ? paced
        ? pacedMeetsTarget(paced)
        : Boolean(best?.withinLatency && best.withinLatency.requestsPerSecond >= TARGETS.postOrdersPerSecond)
      : undefined,
  });
  const pipe = result.phases.pipeline;
  const tp = pipe?.throughput;
  rows.push({
    target: `≥ ${TARGETS.decisionsPerSecond} deposit decisions/s sustained`,
    measured: tp ? `${fmt(tp.rates.decisionsPerSecondSteady)}/s steady (${fmt(tp.rates.decisionsPerSecond)}/s over the whole run)` : 'not measured',
    ok: tp ? tp.rates.decisionsPerSecondSteady >= TARGETS.decisionsPerSecond : undefined,
  });
  const hot = pipe?.hotAccount;
  rows.push({
    target: 'one bank account ≥ ½ of the decisions/s over every account',
    measured:
      hot && tp
        ? `${fmt(hot.rates.decisionsPerSecondSteady)}/s steady into one account, ${round(hot.rates.decisionsPerSecondSteady / tp.rates.decisionsPerSecondSteady, 2)} of ${fmt(tp.rates.decisionsPerSecondSteady)}/s` +
          (pipe.hotAccountFixedRate
            ? `; at ${fmt(pipe.hotAccountFixedRate.offeredRate)}/s offered, p99 ${ms(pipe.hotAccountFixedRate.latencyMs.decisionFromSent.p99)} from send`
            : '')
        : 'not measured',
    ok: hot && tp ? hot.rates.decisionsPerSecondSteady >= tp.rates.decisionsPerSecondSteady / 2 : undefined,
  });
  const two = pipe?.twoMatchersThroughput;
  if (two && tp) {
    rows.push({
      target: 'two matchers beside one (reported, no target)',
      measured:
        `${fmt(two.rates.decisionsPerSecondSteady)}/s steady over every account with two matchers, against ${fmt(tp.rates.decisionsPerSecondSteady)}/s with one` +
        (pipe.twoMatchersHotAccount && hot
          ? `; one account: ${fmt(pipe.twoMatchersHotAccount.rates.decisionsPerSecondSteady)}/s against ${fmt(hot.rates.decisionsPerSecondSteady)}/s`
          : ''),
      ok: 'reported',
    });
  }
  const fr = pipe?.fixedRate;
  const ab = pipe?.afterBurst;
  rows.push({
    target: `p99 notification → decision < ${TARGETS.decisionP99MsAt200} ms at ${fmt(fr?.offeredRate ?? 200)}/s offered`,
    measured: fr
      ? `p99 ${ms(fr.latencyMs.decisionFromSent.p99)} from send, ${ms(fr.latencyMs.decisionFromAccepted.p99)} from 202 (p50 ${ms(fr.latencyMs.decisionFromAccepted.p50)}), sustained for ${fmt(fr.requests / fr.offeredRate)} s` +
        (ab ? `; right after the burst, p99 ${ms(ab.latencyMs.decisionFromSent.p99)} from send` : '')
      : 'not measured',
    ok: fr ? fr.latencyMs.decisionFromSent.p99 < TARGETS.decisionP99MsAt200 : undefined,
  });
  rows.push({
    target: `≥ ${TARGETS.webhooksPerSecond} webhook deliveries/s`,
    measured:
      tp?.rates.webhooksPerSecondSteady !== undefined
        ? `${fmt(tp.rates.webhooksPerSecondSteady)}/s steady (${fmt(tp.rates.webhooksPerSecond)}/s first to last)`
        : `not measured${pipe?.webhooksNotMeasured ? `: ${pipe.webhooksNotMeasured}` : ''}`,
    ok: tp?.rates.webhooksPerSecondSteady !== undefined ? tp.rates.webhooksPerSecondSteady >= TARGETS.webhooksPerSecond : undefined,
  });
  const ratio = result.ratios?.decisionsToComposite;
  rows.push({
    target: 'pipeline ≥ ⅓ of its infrastructure baseline',
    measured:
      ratio !== undefined
        ? `decisions ${fmt(ratio * 100)} % of the composite baseline (${fmt(result.ratios.decisionsToPg * 100)} % of pg+Redis alone)`
        : 'not measured',
    ok: ratio !== undefined ? ratio >= TARGETS.baselineFraction : undefined,
  });
  return rows;
}

/**
 * The API target, judged as the deposit latency target is: at the rate it names, offered in an
 * open loop. Every order created, none held back by the bench's in-flight cap, and answers kept
 * up with the offer (steady rate within 2 % of it: the bench's own timer is not exact). The warm-up
 * before it must have created its orders too; its latency is reported, not judged.
 */
function pacedMeetsTarget(paced) {
  return (
    paced.offeredRate >= TARGETS.postOrdersPerSecond &&
    paced.created === paced.offeredRate * paced.seconds &&
    paced.warmUp.created === paced.offeredRate * paced.warmUp.seconds &&
    paced.heldBack === 0 &&
    paced.requestsPerSecond >= paced.offeredRate * 0.98 &&
    paced.latencyMs.p99 < TARGETS.postOrdersP99Ms
  );
}

/** The run, its machine, each target's verdict and any failure: what docs/BENCHMARKS.md shows of the last full run. */
export function renderSummary(result) {
  const m = result.machine;
  const lines = [];
  lines.push(`Run \`${result.runId}\`, scale \`${result.config.scale}\`, ${result.startedAt}, ${round(result.durationSeconds, 0)} s in all.`);
  lines.push('');
  lines.push(
    `Machine: ${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.kernel}; Node ${m.node}; PostgreSQL ${m.postgres}; RabbitMQ ${m.rabbitmq}; Redis ${m.redis}. ` +
      `Load average at start ${m.loadAverageAtStart.join(' / ')}. Everything (services, PostgreSQL, RabbitMQ, Redis, the load generator and the webhook receiver) on this one machine.`,
  );
  lines.push('');
  lines.push('| target | measured | verdict |');
  lines.push('|---|---|---|');
  for (const r of targetRows(result)) lines.push(`| ${r.target} | ${r.measured} | ${verdict(r.ok)} |`);
  lines.push('');
  if (result.peakRssMiB) {
    const peaks = Object.entries(result.peakRssMiB).map(([name, mib]) => `${name} ${mib === undefined ? 'exited' : `${fmt(mib)} MiB`}`);
    lines.push(`Peak resident memory of each service process over the run: ${peaks.join(', ')}.`);
    lines.push('');
  }
  if (result.failures.length > 0) {
    lines.push('**Failures:**');
    for (const f of result.failures) lines.push(`- ${f}`);
    lines.push('');
  }
  return lines;
}

/** The whole report of a run: its summary, then every phase's tables, failures and notes. */
export function renderMarkdown(result) {
  const lines = renderSummary(result);
  const api = result.phases.api;
  if (api) {
    lines.push(
      `**API** (autocannon, ${api.seconds} s per step, rate limit raised to ${api.rateLimit}; the open-loop step sends at a fixed rate whether or not earlier requests were answered):`,
    );
    lines.push('');
    lines.push(
      '| request | connections | req/s | p50 | p90 | p99 | max | errors / timeouts / non-2xx | CPU ms per request: all (orders-api / matcher / dispatcher / PostgreSQL / RabbitMQ / bench) | PostgreSQL per request: transactions / WAL records |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---|---|---|');
    const cpuCell = (c) =>
      c
        ? `${c.all} (${c.services['orders-api']} / ${c.services.matcher} / ${c.services['webhook-dispatcher']} / ${c.infra.postgres} / ${c.infra['beam.smp']} / ${c.bench})`
        : '—';
    const countsCell = (s) => (s.postgresPerRequest ? `${s.postgresPerRequest.transactions} / ${s.postgresPerRequest.walRecords}` : '—');
    const stepRow = (s, connections, failed) =>
      `| ${s.name} | ${connections} | ${fmt(s.requestsPerSecond)} | ${ms(s.latencyMs.p50)} | ${ms(s.latencyMs.p90)} | ${ms(s.latencyMs.p99)} | ${ms(s.latencyMs.max)} | ${failed} | ${cpuCell(s.cpuPerRequestMs)} | ${countsCell(s)} |`;
    const closedRow = (s) => stepRow(s, s.connections, `${s.errors} / ${s.timeouts} / ${s.non2xx}`);
    const fr = api.fixedRate;
    for (const s of api.steps.filter((step) => step.name === 'POST /v1/orders')) lines.push(closedRow(s));
    if (fr)
      lines.push(
        stepRow(
          fr,
          `open loop, ${fmt(fr.offeredRate)}/s offered for ${fr.seconds} s`,
          `not created ${fr.offeredRate * fr.seconds - fr.created}, held back ${fr.heldBack}; warm-up before it (${fr.warmUp.seconds} s, not counted): p99 ${ms(fr.warmUp.latencyMs.p99)}, not created ${fr.offeredRate * fr.warmUp.seconds - fr.warmUp.created}`,
        ),
      );
    for (const s of api.steps.filter((step) => step.name !== 'POST /v1/orders')) lines.push(closedRow(s));
    if (fr?.slowestWindows?.length) {
      const worst = fr.slowestWindows.map((w) => `${w.at.slice(11, 22)} (p50 ${ms(w.p50)}, max ${ms(w.max)})`).join(', ');
      lines.push('', `The open-loop step's slowest 100 ms by median answer, sent at (UTC): ${worst}.`);
    }
    if (api.drain)
      lines.push(
        '',
        `After the API steps, the asynchronous work behind the ${fmt(api.ordersCreated)} new orders (order.registered late-order checks, order.created events) took ${api.drain.seconds} s more to drain${api.drain.timedOut ? ' (did not finish within the bound)' : ''}.`,
      );
    lines.push('');
  }

  const st = result.phases.statements;
  if (st) {
    lines.push(
      `**Statement import** (Zengin 03, ${fmt(st.records)} records over ${st.accounts} accounts, ${st.withdrawalsShare} a withdrawal, stored ${st.batch} per batch): ` +
        `bare baseline (the same rows through the same statements, no file, no checks) ${fmt(st.baseline.recordsPerSecond)} records/s; ` +
        `import ${fmt(st.sizes[0].recordsPerSecond)} records/s, ${st.importToBaseline} of the baseline (target ≥ 0.333).`,
    );
    lines.push('');
    lines.push('| file | records | MiB | seconds | records/s | bank-ingest peak RSS growth |');
    lines.push('|---|---:|---:|---:|---:|---:|');
    for (const size of st.sizes)
      lines.push(`| Zengin 03 | ${fmt(size.records)} | ${size.mebibytes} | ${size.seconds} | ${fmt(size.recordsPerSecond)} | ${size.peakRssGrowthMiB} MiB |`);
    lines.push('');
  }

  const pipe = result.phases.pipeline;
  if (pipe) {
    lines.push(
      `**Pipeline** (${fmt(pipe.orders)} open orders over ${pipe.accounts} live accounts of ${pipe.organisations} merchants, seeded by SQL in ${pipe.seedSeconds} s; mix ${pipe.mix}):`,
    );
    if (pipe.candidateLookup)
      lines.push(
        '',
        `Candidate lookup at ${fmt(pipe.candidateLookup.openOrders)} open orders: ${pipe.candidateLookup.plan}, ${pipe.candidateLookup.meanMs} ms mean (pg, prepared, one connection).`,
      );
    lines.push('');
    lines.push(
      '| run | sent | accepted/s | decisions/s (steady) | webhooks/s (steady) | 202 latency p50 / p99 | 202 → decision p50 / p99 | send → decision p99 | 202 → order.paid webhook p50 / p99 |',
    );
    lines.push('|---|---:|---:|---:|---:|---|---|---|---|');
    const runs = [
      [`fixed ${fmt(pipe.fixedRate?.offeredRate)}/s offered`, pipe.fixedRate],
      [`fixed ${fmt(pipe.lowRate?.offeredRate)}/s offered`, pipe.lowRate],
      ['as fast as accepted', pipe.throughput],
      [`fixed ${fmt(pipe.afterBurst?.offeredRate)}/s offered, right after it`, pipe.afterBurst],
      ['one account, as fast as accepted', pipe.hotAccount],
      [`one account, fixed ${fmt(pipe.hotAccountFixedRate?.offeredRate)}/s offered`, pipe.hotAccountFixedRate],
      ['two matchers, as fast as accepted', pipe.twoMatchersThroughput],
      ['two matchers, one account, as fast as accepted', pipe.twoMatchersHotAccount],
    ].filter(([, run]) => run);
    for (const [name, run] of runs) {
      const l = run.latencyMs;
      lines.push(
        `| ${name} | ${fmt(run.requests)} | ${fmt(run.rates.acceptedPerSecond)} | ${fmt(run.rates.decisionsPerSecondSteady)} | ${fmt(run.rates.webhooksPerSecondSteady)} | ${ms(l.accept.p50)} / ${ms(l.accept.p99)} | ${ms(l.decisionFromAccepted.p50)} / ${ms(l.decisionFromAccepted.p99)} | ${ms(l.decisionFromSent.p99)} | ${ms(l.webhookOrderPaid.p50)} / ${ms(l.webhookOrderPaid.p99)} |`,
      );
    }
    const paced = runs.filter(([, run]) => run.stages);
    if (paced.length > 0) {
      lines.push('');
      lines.push(
        'Where the time from send to decision went in the paced runs (p50 / p99 of each stage, from the services\' own timestamps; docs/BENCHMARKS.md, "Stages"):',
      );
      lines.push('');
      lines.push(
        '| run | send → stored | stored → 202 at the bench | stored → published (confirmed) | stored → claimed by the matcher | claimed → decided | slowest 1 %: from, mean send → stored / → claimed / → decided, distinct seconds |',
      );
      lines.push('|---|---|---|---|---|---|---|');
      const pair = (s) => `${ms(s.p50)} / ${ms(s.p99)}`;
      for (const [name, run] of paced) {
        const { stages: st, tail } = run.stages;
        lines.push(
          `| ${name} | ${pair(st.sendToStored)} | ${pair(st.storedToAccepted)} | ${pair(st.storedToPublished)} | ${pair(st.storedToClaimed)} | ${pair(st.claimedToDecided)} | ` +
            `≥ ${ms(tail.fromMs)}: ${ms(tail.meanMs.sendToStored)} / ${ms(tail.meanMs.storedToClaimed)} / ${ms(tail.meanMs.claimedToDecided)}, ${tail.deposits} deposits in ${tail.seconds} s |`,
        );
      }
    }
    lines.push('');
    lines.push('Outcomes checked against what was sent:');
    lines.push('');
    lines.push(
      '| run | sent confirmed / held / unmatched | decided confirmed / held / unmatched | pending / missing | mismatches | refused (5xx) and retried | webhooks expected / received |',
    );
    lines.push('|---|---|---|---|---:|---:|---|');
    for (const [name, run] of Object.entries(pipe.checks)) {
      const s = run.sent;
      const c = run.counts;
      lines.push(
        `| ${name} | ${s.confirmed} / ${s.held} / ${s.unmatched} | ${c.confirmed} / ${c.held} / ${c.unmatched} | ${c.pending} / ${c.missing} | ${run.mismatches} | ${run.retried} | ${run.webhooks ?? '—'} |`,
      );
    }
    lines.push('');
    const metered = runs.filter(([, run]) => run.cpuPerDeposit);
    if (metered.length > 0) {
      lines.push(
        "CPU per deposit in each run (ms; the meter spans the run from its first notification to its last webhook, so a run's share of idle polling counts too; a service's replicas together):",
      );
      lines.push('');
      lines.push(
        '| run | all | orders-api | bank-ingest | matcher | webhook-dispatcher | PostgreSQL (its backends / autovacuum) | RabbitMQ | Redis | bench | machine busy (other processes) |',
      );
      lines.push('|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|');
      for (const [name, run] of metered) {
        const c = run.cpuPerDeposit;
        // A service's processes together: `matcher` and `matcher#2` in the two-matcher runs.
        const svc = (k) => {
          const own = Object.entries(c.services).filter(([name]) => name === k || name.startsWith(`${k}#`));
          return own.length === 0
            ? '—'
            : round(
                own.reduce((sum, [, ms]) => sum + ms, 0),
                2,
              );
        };
        lines.push(
          `| ${name} | ${c.all} | ${svc('orders-api')} | ${svc('bank-ingest')} | ${svc('matcher')} | ${svc('webhook-dispatcher')} | ${c.infra.postgres} (${c.postgresByKind?.backends ?? '—'} / ${c.postgresByKind?.autovacuum ?? '—'}) | ${c.infra['beam.smp']} | ${c.infra['redis-server']} | ${c.bench} | ${c.machineBusyPercent} % (${c.otherPercent} %) |`,
        );
      }
      lines.push('');
    }
    const counted = runs.filter(([, run]) => run.postgresPerDeposit?.wal);
    if (counted.length > 0) {
      lines.push(
        "PostgreSQL's work per deposit in each run, as counts, which do not move with the machine's speed (transactions committed in the bench database, read-only ones included; WAL of the whole server):",
      );
      lines.push('');
      lines.push('| run | transactions | WAL records | full-page images | WAL bytes |');
      lines.push('|---|---:|---:|---:|---:|');
      for (const [name, run] of counted) {
        const { database, wal } = run.postgresPerDeposit;
        lines.push(`| ${name} | ${database.xact_commit} | ${wal.records} | ${wal.fpi} | ${fmt(wal.bytes)} |`);
      }
      lines.push('');
    }
    // The paced run the p99 target is about, and the burst the throughput targets are about.
    const profiled = runs.filter(([, run]) => (run === pipe.fixedRate || run === pipe.throughput) && run.statements);
    for (const [name, run] of profiled) {
      const profile = run.statements;
      lines.push(
        `Statements by PostgreSQL time in the run "${name}" (${profile.planningTracked ? 'execution and planning' : 'execution only: pg_stat_statements.track_planning is off'}; pg_stat_statements): ${profile.totalMsPerDeposit} ms per deposit in all, the top ones:`,
      );
      lines.push('');
      const planning = profile.planningTracked ? ' (of which planning; share of calls planned)' : '';
      lines.push(`| statement | calls per deposit | rows per call | ms per call${planning} | ms per deposit | share |`);
      lines.push('|---|---:|---:|---:|---:|---:|');
      for (const st of profile.statements) {
        const perCall = profile.planningTracked ? `${st.msPerCall} (${st.planMsPerCall}; ${Math.round((st.plannedShare ?? 0) * 100)} %)` : st.msPerCall;
        lines.push(
          `| \`${st.query.replace(/\|/g, '\\|').replace(/`/g, "'")}…\` | ${st.callsPerDeposit} | ${st.rowsPerCall} | ${perCall} | ${st.msPerDeposit} | ${Math.round(st.share * 100)} % |`,
        );
      }
      lines.push('');
    }
    const autovacuum = pipe.throughput?.postgresPerDeposit?.autovacuum;
    if (autovacuum && Object.keys(autovacuum).length > 0) {
      lines.push(
        `Autovacuum during the as-fast-as-accepted run: ${Object.entries(autovacuum)
          .map(([t, v]) => `${t} ${v.vacuums} vacuums, ${v.analyses} analyses`)
          .join('; ')}.`,
      );
      lines.push('');
    }
    if (pipe.backlog) {
      const b = pipe.backlog;
      lines.push(
        `Largest backlogs in the as-fast-as-accepted run: matcher queue ${fmt(b.matcher_queue)}, pending deposits ${fmt(b.deposits_pending)}, unpublished outbox rows ${fmt(b.outbox_unpublished)}, dispatcher queue ${fmt(b.dispatcher_queue)}, pending deliveries ${fmt(b.deliveries_pending)}.`,
      );
      lines.push('');
    }
  }

  const base = result.phases.baseline;
  if (base) {
    lines.push('**Baseline** (same machine, same run, no service code):');
    lines.push('');
    lines.push('| what | figure | pipeline figure | ratio |');
    lines.push('|---|---|---|---:|');
    const r = result.ratios ?? {};
    const tp = pipe?.throughput;
    if (base.pg)
      lines.push(
        `| ${base.pg.what}, ${base.pg.workers} workers | ${fmt(base.pg.depositsPerSecond)} deposits/s (p50 ${ms(base.pg.latencyMs.total.p50)}, p99 ${ms(base.pg.latencyMs.total.p99)}; PostgreSQL ${base.pg.cpuPerDepositMs.postgres} ms CPU per deposit, machine ${base.pg.cpu.machineBusyPercent} % busy) | ${fmt(tp?.rates.decisionsPerSecondSteady)} decisions/s | ${r.decisionsToPg !== undefined ? fmt(r.decisionsToPg, 2) : '—'} |`,
      );
    if (base.pgAsync)
      lines.push(
        `| the same with synchronous_commit=off (comparison only: how much is commit flushing) | ${fmt(base.pgAsync.depositsPerSecond)} deposits/s (p50 ${ms(base.pgAsync.latencyMs.total.p50)}) | | |`,
      );
    if (base.amqp)
      lines.push(
        `| ${base.amqp.what} | ${fmt(base.amqp.publishConfirmedPerSecond)} msg/s published+confirmed, ${fmt(base.amqp.endToEndPerSecond)} msg/s consumed | ${r.amqpMessagesPerSecond !== undefined ? `${fmt(r.amqpMessagesPerSecond)} msg/s (${fmt(r.messagesPerDeposit, 1)} per deposit)` : '—'} | ${r.amqpToBaseline !== undefined ? fmt(r.amqpToBaseline, 2) : '—'} |`,
      );
    if (r.compositeDepositsPerSecond !== undefined)
      lines.push(
        `| composite: pg+Redis and ${fmt(r.messagesPerDeposit, 1)} AMQP messages per deposit on the same CPUs (1 / Σ costs) | ${fmt(r.compositeDepositsPerSecond)} deposits/s | ${fmt(tp?.rates.decisionsPerSecondSteady)} decisions/s | ${fmt(r.decisionsToComposite, 2)} |`,
      );
    if (base.https)
      lines.push(
        `| ${base.https.what} | ${fmt(base.https.requestsPerSecond)} POST/s (p99 ${ms(base.https.latencyMs.p99)}) | ${fmt(tp?.rates.webhooksPerSecondSteady)} deliveries/s | ${r.webhooksToHttps !== undefined ? fmt(r.webhooksToHttps, 2) : '—'} |`,
      );
    lines.push('');
  }
  if (result.phases.console) lines.push(...consoleMarkdown(result.phases.console));
  if (result.notes.length > 0) {
    lines.push('Notes:');
    for (const n of result.notes) lines.push(`- ${n}`);
    lines.push('');
  }
  return lines.join('\n');
}

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';
/** Where BENCH_UPDATE_DOCS=1 writes the last full run's whole report, relative to docs/. */
export const LAST_RUN_REPORT = 'benchmarks/last-full-run.md';

/**
 * Writes bench-results/<run>.json and .md. With `updateDocs`, also replaces docs/BENCHMARKS.md's
 * results block with the run's summary and writes the whole report to docs/LAST_RUN_REPORT.
 */
export function writeResults(repoRoot, result, updateDocs) {
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const base = `${result.runId}-${result.config.scale}`;
  const markdown = renderMarkdown(result);
  writeFileSync(join(dir, `${base}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(dir, `${base}.md`), `${markdown}\n`);
  writeFileSync(join(dir, `latest-${result.config.scale}.json`), `${JSON.stringify(result, null, 2)}\n`);
  const written = [join('bench-results', `${base}.json`), join('bench-results', `${base}.md`)];
  if (updateDocs) {
    const docs = join(repoRoot, 'docs', 'BENCHMARKS.md');
    if (!existsSync(docs)) throw new Error('docs/BENCHMARKS.md is missing; BENCH_UPDATE_DOCS=1 replaces the part between its result markers');
    const text = readFileSync(docs, 'utf8');
    const from = text.indexOf(START);
    const to = text.indexOf(END);
    if (from < 0 || to < from) throw new Error(`docs/BENCHMARKS.md has no ${START} … ${END} block`);
    const summary = [...renderSummary(result), `Every table of this run: [${LAST_RUN_REPORT}](${LAST_RUN_REPORT}).`, ''].join('\n');
    writeFileSync(docs, `${text.slice(0, from + START.length)}\n${summary}\n${text.slice(to)}`);
    const report = join(repoRoot, 'docs', LAST_RUN_REPORT);
    mkdirSync(dirname(report), { recursive: true });
    const title =
      '# The last full benchmark run\n\nWritten by `BENCH_UPDATE_DOCS=1 pnpm bench`; what each figure means is in [../BENCHMARKS.md](../BENCHMARKS.md).\n\n';
    writeFileSync(report, `${title}${markdown}\n`);
    written.push('docs/BENCHMARKS.md', join('docs', LAST_RUN_REPORT));
  }
  return { markdown, written };
}
