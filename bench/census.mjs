#!/usr/bin/env node
/**
 * Statement census: how many SQL statements (and which) one deposit costs each service. Every
 * service talks to PostgreSQL through a counting proxy of its own on 127.0.0.1 that reads the
 * wire protocol (Query, Parse/Bind/Execute) and passes every byte on unchanged. Deposits are sent
 * one at a time, each waited for until decided and delivered, per outcome; the statements the
 * services make while idle (pollers, sweeps) over the same time are subtracted.
 *
 *   node bench/census.mjs            (BENCH_CENSUS_DEPOSITS per outcome, default 20)
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { NotificationSender, planPipeline, seedOrders, setUpMerchants } from './lib/pipeline.mjs';
import { TestCa, WebhookReceiver } from './lib/receiver.mjs';
import { round, sleep, waitUntil } from './lib/stats.mjs';
import { BenchSystem, INFRA, REPO_ROOT, SERVICES, assertBuilt } from './lib/system.mjs';

const PER_OUTCOME = Number(process.env.BENCH_CENSUS_DEPOSITS ?? 20);
const IDLE_SECONDS = 10;

/** A TCP proxy to PostgreSQL that counts the statements a client executes, by SQL text. */
class CountingProxy {
  constructor(target) {
    this.target = target;
    this.counts = new Map();
    this.sockets = new Set();
  }

  async start() {
    this.server = net.createServer((client) => this.connection(client));
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = this.server.address().port;
  }

  reset() {
    this.counts = new Map();
  }

  total() {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }

  snapshot() {
    return new Map(this.counts);
  }

  record(sql) {
    const text = sql.replace(/\s+/g, ' ').trim().slice(0, 160);
    this.counts.set(text, (this.counts.get(text) ?? 0) + 1);
  }

  connection(client) {
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    upstream.pipe(client);
    let buffer = Buffer.alloc(0);
    let typed = false;
    const named = new Map();
    let unnamed = '';
    let bound = '';
    client.on('data', (chunk) => {
      upstream.write(chunk);
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!typed) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          // SSLRequest / GSSENCRequest come before the real startup message, also untyped.
          if (code !== 80877103 && code !== 80877104) typed = true;
          buffer = buffer.subarray(length);
          continue;
        }
        if (buffer.length < 5) return;
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) return;
        const type = String.fromCharCode(buffer[0]);
        const body = buffer.subarray(5, 1 + length);
        buffer = buffer.subarray(1 + length);
        if (type === 'Q') {
          this.record(cstring(body, 0)[0]);
        } else if (type === 'P') {
          const [name, next] = cstring(body, 0);
          const [sql] = cstring(body, next);
          if (name === '') unnamed = sql;
          else named.set(name, sql);
        } else if (type === 'B') {
          const [, next] = cstring(body, 0);
          const [statement] = cstring(body, next);
          bound = statement === '' ? unnamed : (named.get(statement) ?? `(prepared ${statement})`);
        } else if (type === 'E') {
          this.record(bound);
        }
      }
    });
  }

  async close() {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function cstring(buffer, from) {
  const end = buffer.indexOf(0, from);
  return [buffer.toString('utf8', from, end), end + 1];
}

function diff(after, before) {
  const out = new Map();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

async function main() {
  assertBuilt();
  const pgUrl = new URL(INFRA.adminDatabaseUrl);
  const target = { host: pgUrl.hostname, port: Number(pgUrl.port || 5432) };
  const proxies = Object.fromEntries(SERVICES.map((s) => [s, new CountingProxy(target)]));
  for (const p of Object.values(proxies)) await p.start();
  const ca = TestCa.create();
  const receiver = await WebhookReceiver.start(ca.issueServerCertificate(), { verifyEvery: 1_000_000 });
  let system;
  try {
    system = await BenchSystem.start({
      extraEnv: { WEBHOOK_CA_FILE: ca.certFile, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' },
      serviceEnv: (database) =>
        Object.fromEntries(
          SERVICES.map((s) => {
            const url = new URL(database.url);
            url.host = `127.0.0.1:${proxies[s].port}`;
            return [s, { DATABASE_URL: url.toString() }];
          }),
        ),
    });
    const config = {
      orders: PER_OUTCOME * 3 + 1000,
      notifications: PER_OUTCOME * 3,
      accounts: 4,
      organisations: 1,
      fixedRate: 0,
      fixedRateSeconds: 0,
      mix: { confirmed: 1 / 3, held: 1 / 3, unmatched: 1 / 3 },
    };
    const merchants = await setUpMerchants(system, config, receiver);
    const plan = planPipeline(config, merchants.accounts, 'census');
    await seedOrders(system.database.url, plan.orders);
    const sender = new NotificationSender(system.ingestUrl, merchants.adapter, 4);

    // Warm-up, then what the services do on their own when nothing happens.
    for (const n of plan.runs.throughput.notifications.filter((x) => x.kind === 'unmatched').slice(0, 3)) {
      await sender.send({ ...n, reference: `${n.reference}-warm` });
    }
    await sleep(3000);
    for (const p of Object.values(proxies)) p.reset();
    await sleep(IDLE_SECONDS * 1000);
    const idlePerSecond = Object.fromEntries(SERVICES.map((s) => [s, proxies[s].total() / IDLE_SECONDS]));

    const result = { perOutcome: PER_OUTCOME, idleStatementsPerSecond: idlePerSecond, outcomes: {} };
    for (const kind of ['confirmed', 'held', 'unmatched']) {
      const list = plan.runs.throughput.notifications.filter((n) => n.kind === kind);
      const before = Object.fromEntries(SERVICES.map((s) => [s, proxies[s].snapshot()]));
      const started = Date.now();
      for (const n of list) {
        const expectedEvents = kind === 'unmatched' ? 1 : 2;
        const already = (await receiver.counts()).unique;
        const sent = await sender.send(n);
        if (sent.status !== 202) throw new Error(`notification refused: ${sent.status}`);
        await waitUntil(async () => ((await receiver.counts()).unique >= already + expectedEvents ? true : undefined), {
          timeoutMs: 30_000,
          intervalMs: 10,
          what: 'the webhooks of one deposit',
        });
        // Let the delivery's own bookkeeping (attempt record) finish before the next deposit.
        await sleep(150);
      }
      const seconds = (Date.now() - started) / 1000;
      const perService = {};
      for (const s of SERVICES) {
        const d = diff(proxies[s].snapshot(), before[s]);
        let total = 0;
        for (const v of d.values()) total += v;
        perService[s] = {
          statementsPerDeposit: round((total - idlePerSecond[s] * seconds) / list.length, 1),
          statements: [...d].sort((a, b) => b[1] - a[1]).map(([sql, c]) => ({ perDeposit: round(c / list.length, 2), sql })),
        };
      }
      result.outcomes[kind] = { deposits: list.length, seconds: round(seconds, 1), perService };
    }
    sender.close();

    // The API's hot path: POST /v1/orders, one at a time, with what it sets off elsewhere
    // (order.registered → the matcher's late-order check, order.created → the dispatcher).
    const ops = await system.operator();
    const org = await ops.createOrganisation('census API', 'census@example.com');
    const key = await ops.issueApiKey(org.id, 'test', 'census');
    const post = (i) =>
      fetch(`${system.apiUrl}/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 7000 + i, payer_name: 'ヤマダ タロウ', external_id: `census-${i}`, item_name: 'お米 5kg' }),
      });
    await post(-1);
    await sleep(1000);
    const beforeApi = Object.fromEntries(SERVICES.map((s) => [s, proxies[s].snapshot()]));
    const apiStarted = Date.now();
    for (let i = 0; i < PER_OUTCOME; i++) {
      const res = await post(i);
      if (res.status !== 201) throw new Error(`POST /v1/orders answered ${res.status}`);
      await res.arrayBuffer();
    }
    await sleep(1000);
    const apiSeconds = (Date.now() - apiStarted) / 1000;
    const apiPerService = {};
    for (const s of SERVICES) {
      const d = diff(proxies[s].snapshot(), beforeApi[s]);
      let total = 0;
      for (const v of d.values()) total += v;
      apiPerService[s] = {
        statementsPerRequest: round((total - idlePerSecond[s] * apiSeconds) / PER_OUTCOME, 1),
        statements: [...d].sort((a, b) => b[1] - a[1]).map(([sql, c]) => ({ perRequest: round(c / PER_OUTCOME, 2), sql })),
      };
    }
    result.postOrders = { requests: PER_OUTCOME, seconds: round(apiSeconds, 1), perService: apiPerService };
    mkdirSync(join(REPO_ROOT, 'bench-results'), { recursive: true });
    const file = join(REPO_ROOT, 'bench-results', `census-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    print(result);
    console.log(`\nwrote ${file}`);
  } finally {
    await system?.stop();
    await receiver.close();
    ca.remove();
    for (const p of Object.values(proxies)) await p.close();
  }
}

function print(result) {
  console.log(`SQL statements executed per deposit (idle rate subtracted; ${result.perOutcome} deposits per outcome, one at a time):\n`);
  console.log(`| service | ${Object.keys(result.outcomes).join(' | ')} | idle statements/s |`);
  console.log(
    `|---|${Object.keys(result.outcomes)
      .map(() => '---:')
      .join('|')}|---:|`,
  );
  for (const s of SERVICES) {
    console.log(
      `| ${s} | ${Object.values(result.outcomes)
        .map((o) => o.perService[s].statementsPerDeposit)
        .join(' | ')} | ${round(result.idleStatementsPerSecond[s], 1)} |`,
    );
  }
  for (const s of ['bank-ingest', 'matcher', 'webhook-dispatcher']) {
    console.log(`\n${s}, confirmed deposit:`);
    for (const st of result.outcomes.confirmed.perService[s].statements.filter((x) => x.perDeposit >= 0.2))
      console.log(`  ${String(st.perDeposit).padStart(5)} × ${st.sql}`);
  }
  console.log(
    `\nPOST /v1/orders, statements per request (idle rate subtracted): ${SERVICES.map((s) => `${s} ${result.postOrders.perService[s].statementsPerRequest}`).join(', ')}`,
  );
  for (const s of ['orders-api', 'matcher']) {
    console.log(`\n${s}, per POST /v1/orders:`);
    for (const st of result.postOrders.perService[s].statements.filter((x) => x.perRequest >= 0.2))
      console.log(`  ${String(st.perRequest).padStart(5)} × ${st.sql}`);
  }
}

main()
  .catch((error) => {
    console.error(`census failed: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref());
