import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import amqp from 'amqplib';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { INFRA, REPO_ROOT } from './system.mjs';
import { pool, prng, ratePerSecond, round, shuffle, sleep, summarise, waitForProgress } from './stats.mjs';
import { HOT_ACCOUNT_RUNS, runSizes } from './config.mjs';

const require = createRequire(import.meta.url);

/** The matcher's candidate statement (parameters: bank account id, amount, deposit time), from its build. */
export function matcherCandidateLookup() {
  return require(join(REPO_ROOT, 'services/matcher/dist/data/candidates.js')).readAmountCandidates;
}

/**
 * The matcher's two statements of a decision, from its build: the read of the pending deposit with
 * its amount candidates (one row per candidate, columns prefixed `transaction.` and `candidate.`,
 * with the rows' versions), and the write of decisions with their events and outbox rows, with the
 * most decisions it writes at once. Their values go by name through `bind`.
 */
export function matcherDecisionStatements() {
  const { readDepositsQuery } = require(join(REPO_ROOT, 'services/matcher/dist/data/deposit-to-decide.js'));
  const { writeDecisionsBatchedQuery, DECISIONS_PER_STATEMENT } = require(join(REPO_ROOT, 'services/matcher/dist/data/decisions-batched.js'));
  return { read: readDepositsQuery, write: writeDecisionsBatchedQuery, perStatement: DECISIONS_PER_STATEMENT };
}

/** bank-ingest's own store of deposits, many in one statement, and its batch size (the baseline stores with it). */
export function bankIngestDepositStore() {
  const { insertNewDeposits, DEPOSITS_PER_STATEMENT } = require(join(REPO_ROOT, 'services/bank-ingest/dist/data/transactions.js'));
  return { insert: insertNewDeposits, perStatement: DEPOSITS_PER_STATEMENT };
}

const { MATCHING_RULES, NAME_RULES, dammInterim, newId, randomBase62 } = require(join(REPO_ROOT, 'packages', 'contracts', 'dist', 'index.js'));

/** The matcher's inbox consumer of `deposit.received` (services/matcher, use-cases/decide-deposit.ts). */
const MATCHER_DEPOSITS_CONSUMER = require(join(REPO_ROOT, 'services/matcher/dist/use-cases/decide-deposit.js')).DEPOSITS_CONSUMER;

export const PAYER_NAME = 'ヤマダ タロウ';
/** A parent's account, taught as a payer of PAYER_NAME on every account (`BENCH_MATCHING=learning`). */
const TAUGHT_DEPOSITOR = 'ﾔﾏﾀﾞ ﾊﾅｺ';
/** Other payers taught per account, so that the lookup reads a table of a realistic size. */
const OTHER_TAUGHT_PER_ACCOUNT = 200;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

/**
 * The merchants of the pipeline run: organisations with live bank accounts spread over them, one
 * bank adapter that signs every notification, and (when a receiver is given) one live webhook
 * endpoint per organisation, each on its own path of the receiver.
 */
export async function setUpMerchants(system, config, receiver) {
  const ops = await system.operator();
  const organisations = [];
  for (let o = 0; o < config.organisations; o++) {
    organisations.push(await ops.createOrganisation(`ベンチ商店 ${o + 1}`, `owner${o + 1}@example.com`));
  }
  const accounts = new Array(config.accounts);
  await pool(config.accounts, 4, async (a) => {
    const org = organisations[a % organisations.length];
    const account = await ops.addLiveBankAccount({
      organisationId: org.id,
      bankCode: '0001',
      branchCode: '001',
      accountType: 'ordinary',
      accountNumber: String(3_000_000 + a),
      holderName: 'ﾍﾞﾝﾁ ｼﾖｳﾃﾝ',
    });
    accounts[a] = { id: account.id, organisationId: org.id };
  });
  // The hot account's merchant: one big shop with one bank account, and no webhook endpoint, so
  // that its runs measure decisions, not one endpoint's deliveries (at most 4 in flight each).
  const bigShop = await ops.createOrganisation('ベンチ大商店', 'owner-hot@example.com');
  const hot = await ops.addLiveBankAccount({
    organisationId: bigShop.id,
    bankCode: '0001',
    branchCode: '001',
    accountType: 'ordinary',
    accountNumber: String(3_000_000 + config.accounts),
    holderName: 'ﾍﾞﾝﾁ ｵｵｼﾖｳﾃﾝ',
  });
  const hotAccount = { id: hot.id, organisationId: bigShop.id };
  const adapter = await ops.createBankAdapter('bench-bank', [...accounts.map((a) => a.id), hotAccount.id]);
  const endpoints = [];
  if (receiver) {
    for (const [o, org] of organisations.entries()) {
      const key = await ops.issueApiKey(org.id, 'live', 'bench');
      const path = `/merchant/${o + 1}`;
      const res = await fetch(`${system.apiUrl}/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url(path) }),
      });
      const body = await res.json();
      if (res.status !== 201) throw new Error(`webhook endpoint not created: ${res.status} ${JSON.stringify(body)}`);
      await receiver.setSecret(path, body.secret);
      endpoints.push({ id: body.id, organisationId: org.id, path });
    }
  }
  return { adapter, organisations, accounts, hotAccount, endpoints };
}

/**
 * Which orders exist and what each notification should lead to. Amounts tell the cases apart:
 * an order meant for one confirmed deposit has an amount no other order has (10,000 + k); a held
 * deposit's two orders share an amount (5,000,000 + p) and name; an unmatched deposit has an
 * amount no order has (9,000,000 + u). The remaining orders are open background with amounts of
 * their own, so the candidate lookup runs against the full N open orders.
 */
export function planPipeline(config, accounts, runId, hotAccount = accounts[0]) {
  const random = prng(0x5eed);
  const orders = [];
  let single = 0;
  let pair = 0;
  let none = 0;
  let hot = false;
  const accountOf = (n) => (hot ? hotAccount : accounts[n % accounts.length]);
  const newOrder = (account, amount) => {
    // A distinct code per order, as the service gives each open order of an account (six digits and a check digit).
    const payload = String(100_000 + orders.length);
    const order = { id: newId('order'), account, amount, transferCode: `${payload}${dammInterim(payload)}` };
    orders.push(order);
    return order;
  };
  // With every rule on, a third of the confirmed deposits pay by their order's code, a third by a taught payer.
  const counterpartyOf = (order, k) =>
    config.matching !== 'learning' || k % 3 === 0 ? undefined : k % 3 === 1 ? `${order.transferCode} ﾔﾏﾀﾞ ﾀﾛｳ` : TAUGHT_DEPOSITOR;
  const runs = {};
  for (const [run, total] of Object.entries(runSizes(config))) {
    hot = HOT_ACCOUNT_RUNS.has(run);
    const confirmed = Math.round(total * config.mix.confirmed);
    const held = Math.round(total * config.mix.held);
    const unmatched = total - confirmed - held;
    const notifications = [];
    for (let i = 0; i < confirmed; i++) {
      const account = accountOf(single);
      const order = newOrder(account, 10_000 + single++);
      const counterparty = counterpartyOf(order, i);
      notifications.push({ kind: 'confirmed', account, amount: order.amount, expectOrderId: order.id, ...(counterparty ? { counterparty } : {}) });
    }
    for (let i = 0; i < held; i++) {
      const account = accountOf(pair);
      const amount = 5_000_000 + pair++;
      const a = newOrder(account, amount);
      const b = newOrder(account, amount);
      notifications.push({ kind: 'held', account, amount, expectCandidates: [a.id, b.id].sort() });
    }
    for (let i = 0; i < unmatched; i++) {
      notifications.push({ kind: 'unmatched', account: accountOf(none), amount: 9_000_000 + none++ });
    }
    shuffle(notifications, random);
    notifications.forEach((n, i) => (n.reference = `bench-${runId}-${run}-${i}`));
    runs[run] = { notifications, referencePrefix: `bench-${runId}-${run}-`, sent: { confirmed, held, unmatched } };
  }
  hot = false;
  const targeted = orders.length;
  if (targeted > config.orders) {
    throw new Error(`BENCH_ORDERS=${config.orders} is too few: the planned notifications need ${targeted} orders of their own`);
  }
  while (orders.length < config.orders) newOrder(accountOf(single), 10_000 + single++);
  return { orders, targeted, runs };
}

/**
 * The merchants' matching settings: the four name rules (`BENCH_MATCHING=names`), or every rule
 * with payers taught on every account (`learning`): the parent's name of the taught deposits, and
 * others so the lookup reads a table of a realistic size.
 */
export async function configureMatching(databaseUrl, merchants, matching) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const organisations = [...new Set([...merchants.accounts, merchants.hotAccount].map((a) => a.organisationId))];
    await client.query(
      `INSERT INTO settings (organisation_id, mode, matching_rules) SELECT org, 'live', $2::text[] FROM unnest($1::text[]) AS o(org)
       ON CONFLICT (organisation_id, mode) DO UPDATE SET matching_rules = EXCLUDED.matching_rules`,
      [organisations, matching === 'learning' ? [...MATCHING_RULES] : [...NAME_RULES]],
    );
    if (matching !== 'learning') return;
    const rows = [...merchants.accounts, merchants.hotAccount].flatMap((account) => [
      { account, depositor: TAUGHT_DEPOSITOR, depositorKey: 'ヤマダハナコ', payer: PAYER_NAME, payerKey: 'ヤマダタロウ' },
      ...Array.from({ length: OTHER_TAUGHT_PER_ACCOUNT }, (_, i) => ({
        account,
        depositor: `ﾍﾞﾝﾁ ﾊﾟﾖｰ${i}`,
        depositorKey: `ベンチパヨー${i}`,
        payer: `ベンチ カイイン${i}`,
        payerKey: `ベンチカイイン${i}`,
      })),
    ]);
    await client.query(
      `INSERT INTO payer_aliases (id, organisation_id, mode, bank_account_id, depositor_name, depositor_key, payer_name, payer_key, created_by, created_at)
       SELECT 'pal_' || md5(random()::text), org, 'live', ba, dn, dk, pn, pk, 'user:usr_bench', now()
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(org, ba, dn, dk, pn, pk)`,
      [
        rows.map((r) => r.account.organisationId),
        rows.map((r) => r.account.id),
        rows.map((r) => r.depositor),
        rows.map((r) => r.depositorKey),
        rows.map((r) => r.payer),
        rows.map((r) => r.payerKey),
      ],
    );
  } finally {
    await client.end();
  }
}

/**
 * Inserts the open orders straight into the database, in batches through unnest(): setting up
 * 100,000 orders through the API would take minutes and measure nothing the API phase does not.
 * Nothing is enqueued for them (no order.created events, no outbox rows, no late-order checks),
 * so the pipeline measurement starts on a quiet system. VACUUM (ANALYZE) afterwards leaves the
 * table as a long-running database has it: statistics for the planner, and nothing for
 * autovacuum to do about the bulk insert (it would otherwise vacuum all of it during the first
 * paced run).
 */
export async function seedOrders(databaseUrl, orders) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = Date.now();
  try {
    const now = new Date();
    const orderedAt = new Date(now.getTime() - HOUR);
    const expiresAt = new Date(now.getTime() + 14 * DAY);
    const BATCH = 5_000;
    for (let start = 0; start < orders.length; start += BATCH) {
      const batch = orders.slice(start, start + BATCH);
      await client.query(
        `INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name,
                             ordered_at, expires_at, payment_token, created_at, updated_at, transfer_code)
         SELECT id, org, 'live', ba, 'open', amount, $5, ext, $6, $7, $8, token, $9, $9, code
         FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $10::text[], $11::text[], $12::text[]) AS t(id, org, ba, amount, ext, token, code)`,
        [
          batch.map((o) => o.id),
          batch.map((o) => o.account.organisationId),
          batch.map((o) => o.account.id),
          batch.map((o) => String(o.amount)),
          PAYER_NAME,
          'ベンチ商品',
          orderedAt,
          expiresAt,
          now,
          batch.map((o) => `bench-${o.id}`),
          batch.map(() => randomBase62(32)),
          batch.map((o) => o.transferCode),
        ],
      );
    }
    await client.query('VACUUM (ANALYZE) orders');
  } finally {
    await client.end();
  }
  return { orders: orders.length, seconds: round((Date.now() - started) / 1000, 1) };
}

/**
 * The matcher's candidate lookup (its own prepared statement, `readAmountCandidates`, from its build) on the
 * seeded table: its plan, and its mean time over 200 runs on a quiet connection, so a missing or
 * unused index shows at once and the time can be compared across table sizes.
 */
export async function probeCandidateLookup(databaseUrl, orders) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { text } = matcherCandidateLookup();
    const sample = (i) => orders[(i * 7919) % orders.length];
    const now = new Date();
    const first = sample(0);
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${text}`, [first.account.id, first.amount, now]);
    const plan = rows[0]['QUERY PLAN'][0].Plan;
    const nodes = [];
    const walk = (n) => {
      nodes.push(`${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}`);
      for (const c of n.Plans ?? []) walk(c);
    };
    walk(plan);
    for (let i = 0; i < 20; i++) await client.query({ name: 'probe', text, values: [sample(i).account.id, sample(i).amount, now] });
    const started = performance.now();
    const runs = 200;
    for (let i = 0; i < runs; i++) await client.query({ name: 'probe', text, values: [sample(i).account.id, sample(i).amount, now] });
    return { openOrders: orders.length, plan: nodes.join(' → '), meanMs: round((performance.now() - started) / runs, 3) };
  } finally {
    await client.end();
  }
}

/**
 * Signs and posts bank notifications the way a bank adapter does, over keep-alive connections:
 * `adapter` is `{ id, secret }` as `ops adapter create` makes it; every request names the adapter
 * in `bank-adapter-id` and is signed with its secret.
 */
export class NotificationSender {
  constructor(ingestUrl, adapter, maxSockets) {
    this.url = new URL('/ingest/v1/notifications', ingestUrl);
    this.adapterId = adapter.id;
    this.webhook = new Webhook(adapter.secret);
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
    this.counter = 0;
  }

  /**
   * Sends one notification the way a bank adapter would: a refusal (5xx, or no answer) is retried
   * with the same bank reference after an exponential pause (0.2 s doubling to 5 s), at most 8
   * times, so an overloaded bank-ingest costs time, not deposits. Resolves with the timing from the first attempt and every refusal seen;
   * never rejects.
   */
  async send(notification) {
    const refusals = [];
    let first;
    for (let attempt = 1; ; attempt++) {
      const r = await this.sendOnce(notification);
      first ??= r.sentAt;
      const retry = r.status === 0 || r.status >= 500;
      if (!retry || attempt >= 8) {
        // 200 with duplicate: true is an earlier attempt that was stored after all.
        const status = r.status === 200 ? 202 : r.status;
        return { ...r, status, sentAt: first, attempts: attempt, refusals };
      }
      refusals.push(r.status);
      await sleep(Math.min(200 * 2 ** (attempt - 1), 5000));
    }
  }

  sendOnce(notification) {
    const body = JSON.stringify({
      bank_account_id: notification.account.id,
      bank_reference: notification.reference,
      direction: 'deposit',
      amount: notification.amount,
      counterparty: notification.counterparty ?? PAYER_NAME,
      occurred_at: (notification.occurredAt ??= new Date().toISOString()),
    });
    const messageId = `msg_bench_${process.pid}_${++this.counter}`;
    const timestamp = new Date();
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'bank-adapter-id': this.adapterId,
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': this.webhook.sign(messageId, timestamp, body),
    };
    const sentAt = Date.now();
    return new Promise((resolve) => {
      const req = http.request(this.url, { method: 'POST', headers, agent: this.agent, timeout: 30_000 }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const acceptedAt = Date.now();
          let transactionId;
          try {
            transactionId = JSON.parse(Buffer.concat(chunks).toString('utf8')).transaction_id;
          } catch {
            transactionId = undefined;
          }
          resolve({ sentAt, acceptedAt, status: res.statusCode, transactionId });
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (error) => resolve({ sentAt, acceptedAt: Date.now(), status: 0, error: error.message }));
      req.end(body);
    });
  }

  close() {
    this.agent.destroy();
  }
}

/** As fast as bank-ingest accepts, with at most `concurrency` notifications in flight. */
export async function pushAsFastAsAccepted(sender, notifications, concurrency, deadlineMs) {
  const results = new Array(notifications.length);
  await pool(
    notifications.length,
    concurrency,
    async (i) => {
      results[i] = await sender.send(notifications[i]);
    },
    deadlineMs,
  );
  return results;
}

/**
 * Open loop at a fixed offered rate: notification i is due at start + i / rate, sent whether or
 * not earlier ones were answered (so a slow system cannot slow the offer down), with a cap on
 * how many may be in flight so an unresponsive system cannot make the bench pile up sockets.
 */
export async function pushAtFixedRate(sender, notifications, ratePerSec, maxInFlight = 500) {
  const results = new Array(notifications.length);
  const started = Date.now();
  const inFlight = new Set();
  let next = 0;
  let heldBack = 0;
  const deadline = started + (notifications.length / ratePerSec) * 1000 * 3 + 60_000;
  while (next < notifications.length && Date.now() < deadline) {
    const due = Math.min(notifications.length, Math.floor(((Date.now() - started) * ratePerSec) / 1000) + 1);
    while (next < due) {
      if (inFlight.size >= maxInFlight) {
        heldBack += 1;
        break;
      }
      const i = next++;
      const p = sender.send(notifications[i]).then((r) => {
        results[i] = r;
        inFlight.delete(p);
      });
      inFlight.add(p);
    }
    await sleep(2);
  }
  await Promise.all([...inFlight]);
  return { results, heldBack, offeredSeconds: (Date.now() - started) / 1000 };
}

/**
 * The bench's own reads run while the pipeline is measured, on the same PostgreSQL: they go through
 * the partial indexes of what is still waiting (pending and unmatched deposits, pending
 * deliveries), so each costs in proportion to the backlog, not to everything the run has written.
 * The planner, with statistics from before the run, would often scan the whole table instead.
 */
async function observerClient(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('SET enable_seqscan = off');
  return client;
}

/**
 * Waits until every stored transaction of a run is decided, as long as decisions keep coming (no
 * new one for a minute, or an hour in all, ends the wait), then reads the decisions. `expected`
 * is the run's 202s; progress counts them less the run's deposits still pending, which can only
 * undercount (a retried notification answered 200 is stored too), so the wait never ends early.
 */
export async function collectDecisions(databaseUrl, referencePrefix, expected) {
  const client = await observerClient(databaseUrl);
  try {
    const { reached } = await waitForProgress(async () => {
      const { rows } = await client.query("SELECT count(*)::int AS pending FROM transactions WHERE status = 'pending' AND bank_reference LIKE $1", [
        `${referencePrefix}%`,
      ]);
      return expected - rows[0].pending;
    }, expected);
    // The run's every row, read once: no index helps, and with seq scans priced out the planner
    // would count this scan as costly enough to compile it (JIT) first.
    await client.query('RESET enable_seqscan');
    // With each decision, when the deposit went through each stage on its way (see `stages`):
    // stored by bank-ingest, its deposit.received message marked published by a relay, taken up by
    // the matcher (the inbox row's time: when its decision began, after the account's lock).
    const { rows } = await client.query(
      `SELECT t.id, t.bank_reference, t.status, t.order_id, t.candidate_order_ids,
              (extract(epoch FROM t.decided_at) * 1000)::float8 AS decided_ms,
              (extract(epoch FROM t.created_at) * 1000)::float8 AS stored_ms,
              (extract(epoch FROM o.published_at) * 1000)::float8 AS published_ms,
              (extract(epoch FROM i.processed_at) * 1000)::float8 AS claimed_ms
       FROM transactions t
       LEFT JOIN outbox o ON o.message_id = 'deposit_' || t.id
       LEFT JOIN inbox i ON i.consumer = $2 AND i.message_id = 'deposit_' || t.id
       WHERE t.bank_reference LIKE $1`,
      [`${referencePrefix}%`, MATCHER_DEPOSITS_CONSUMER],
    );
    return { rows, timedOut: !reached };
  } finally {
    await client.end();
  }
}

/**
 * Compares every decision with what the notification was built to cause: the outcome, the order
 * a confirmed deposit paid and the two candidates of a held one.
 */
export function checkOutcomes(notifications, results, rowsByReference) {
  const counts = { confirmed: 0, held: 0, unmatched: 0, pending: 0, missing: 0, other: 0 };
  const mismatches = [];
  notifications.forEach((n, i) => {
    const row = rowsByReference.get(n.reference);
    if (row === undefined) {
      counts.missing += 1;
      if (mismatches.length < 10) mismatches.push({ reference: n.reference, expected: n.kind, got: `not stored (HTTP ${results[i]?.status})` });
      return;
    }
    counts[row.status in counts ? row.status : 'other'] += 1;
    let ok = row.status === n.kind;
    if (ok && n.kind === 'confirmed') ok = row.order_id === n.expectOrderId;
    if (ok && n.kind === 'held') ok = JSON.stringify([...row.candidate_order_ids].sort()) === JSON.stringify(n.expectCandidates);
    if (!ok && mismatches.length < 10) {
      mismatches.push({ reference: n.reference, expected: n.kind, got: row.status, order_id: row.order_id, candidates: row.candidate_order_ids });
    }
  });
  return { counts, mismatches };
}

/** Webhook deliveries one deposit causes: transaction.deposited, plus order.paid or transaction.held. */
export const expectedEvents = (sent) => 2 * sent.confirmed + 2 * sent.held + sent.unmatched;

/**
 * Samples, once a second, where work is queued: AMQP queue depths of the matcher and the
 * dispatcher, unpublished outbox rows, pending deposits and pending webhook deliveries. The
 * maxima show which stage a backlog builds up in.
 */
export class BacklogSampler {
  constructor(databaseUrl, amqpPrefix) {
    this.databaseUrl = databaseUrl;
    this.amqpPrefix = amqpPrefix;
    this.samples = [];
    this.stopped = false;
  }

  async start() {
    this.db = await observerClient(this.databaseUrl);
    if (this.amqpPrefix !== undefined) {
      this.connection = await amqp.connect(INFRA.rabbitmqUrl);
      this.channel = await this.connection.createChannel();
    }
    this.loop = (async () => {
      // Bounded by stop(); at most one hour of samples as a backstop.
      for (let i = 0; i < 3600 && !this.stopped; i++) {
        const at = Date.now();
        try {
          this.samples.push({ at, ...(await this.sample()) });
        } catch (error) {
          this.samples.push({ at, error: error.message });
        }
        await sleep(Math.max(0, 1000 - (Date.now() - at)));
      }
    })();
  }

  async sample() {
    const { rows } = await this.db.query(`SELECT
      (SELECT count(*)::int FROM outbox WHERE published_at IS NULL) AS outbox_unpublished,
      (SELECT count(*)::int FROM transactions WHERE status = 'pending') AS deposits_pending,
      (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS deliveries_pending`);
    const queues = {};
    if (this.channel) {
      for (const q of ['matcher.deposits', 'webhook-dispatcher.events']) {
        queues[q] = (await this.channel.checkQueue(`${this.amqpPrefix}${q}`)).messageCount;
      }
    }
    return { ...rows[0], queues };
  }

  maxima(fromMs, toMs) {
    const within = this.samples.filter((s) => s.at >= fromMs && s.at <= toMs && s.error === undefined);
    const max = (f) => within.reduce((m, s) => Math.max(m, f(s) ?? 0), 0);
    return {
      samples: within.length,
      outbox_unpublished: max((s) => s.outbox_unpublished),
      deposits_pending: max((s) => s.deposits_pending),
      deliveries_pending: max((s) => s.deliveries_pending),
      matcher_queue: max((s) => s.queues['matcher.deposits']),
      dispatcher_queue: max((s) => s.queues['webhook-dispatcher.events']),
    };
  }

  async stop() {
    this.stopped = true;
    await this.loop;
    await this.db.end();
    await this.connection?.close();
  }
}

/**
 * The figures of one run: rates over the run's own window and latencies per deposit, from the
 * 202 (accepted) and from the moment the notification was sent.
 */
export function analyseRun({ notifications, results, rowsByReference, arrivalsByTransaction, sent }) {
  const accepted = results.filter((r) => r?.status === 202);
  const statuses = {};
  const refusals = {};
  let retried = 0;
  for (const r of results) {
    if (!r) continue;
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.refusals.length > 0) retried += 1;
    for (const code of r.refusals) refusals[code] = (refusals[code] ?? 0) + 1;
  }
  const firstSent = Math.min(...results.filter(Boolean).map((r) => r.sentAt));
  const lastAccepted = Math.max(...accepted.map((r) => r.acceptedAt));
  const lastSent = Math.max(...results.filter(Boolean).map((r) => r.sentAt));
  const decidedTimes = [];
  const latency = { accept: [], decisionFromAccepted: [], decisionFromSent: [], webhookFirst: [], webhookOrderPaid: [], webhookOutcome: [] };
  const arrivalTimes = [];
  notifications.forEach((n, i) => {
    const r = results[i];
    if (r?.status !== 202) return;
    latency.accept.push(r.acceptedAt - r.sentAt);
    const row = rowsByReference.get(n.reference);
    if (row?.decided_ms == null) return;
    decidedTimes.push(row.decided_ms);
    latency.decisionFromAccepted.push(row.decided_ms - r.acceptedAt);
    latency.decisionFromSent.push(row.decided_ms - r.sentAt);
    const arrivals = arrivalsByTransaction?.get(row.id);
    if (arrivals === undefined) return;
    for (const t of Object.values(arrivals)) arrivalTimes.push(t);
    if (arrivals['transaction.deposited'] !== undefined) latency.webhookFirst.push(Math.min(...Object.values(arrivals)) - r.acceptedAt);
    if (arrivals['order.paid'] !== undefined) latency.webhookOrderPaid.push(arrivals['order.paid'] - r.acceptedAt);
    const outcomeType = { confirmed: 'order.paid', held: 'transaction.held', unmatched: 'transaction.deposited' }[row.status];
    if (arrivals[outcomeType] !== undefined) latency.webhookOutcome.push(arrivals[outcomeType] - r.acceptedAt);
  });
  decidedTimes.sort((a, b) => a - b);
  arrivalTimes.sort((a, b) => a - b);
  const lastDecided = decidedTimes.at(-1);
  // The middle 80 % of decisions: the rate once the pipeline is full and before it drains.
  const p10 = decidedTimes[Math.floor(decidedTimes.length * 0.1)];
  const p90 = decidedTimes[Math.floor(decidedTimes.length * 0.9)];
  const steady = decidedTimes.filter((t) => t >= p10 && t <= p90).length;
  const a10 = arrivalTimes[Math.floor(arrivalTimes.length * 0.1)];
  const a90 = arrivalTimes[Math.floor(arrivalTimes.length * 0.9)];
  const steadyArrivals = arrivalTimes.filter((t) => t >= a10 && t <= a90).length;
  return {
    sent,
    requests: results.filter(Boolean).length,
    accepted: accepted.length,
    httpStatuses: statuses,
    refusedThenRetried: { notifications: retried, refusals },
    window: {
      firstSent,
      lastSent,
      lastAccepted,
      lastDecided,
      lastWebhook: arrivalTimes.at(-1),
    },
    rates: {
      offeredPerSecond: ratePerSecond(results.filter(Boolean).length, firstSent, lastSent),
      acceptedPerSecond: ratePerSecond(accepted.length, firstSent, lastAccepted),
      decisionsPerSecond: ratePerSecond(decidedTimes.length, firstSent, lastDecided),
      decisionsPerSecondSteady: ratePerSecond(steady, p10, p90),
      webhooksPerSecond: arrivalTimes.length > 0 ? ratePerSecond(arrivalTimes.length, arrivalTimes[0], arrivalTimes.at(-1)) : undefined,
      webhooksPerSecondSteady: arrivalTimes.length > 0 ? ratePerSecond(steadyArrivals, a10, a90) : undefined,
      webhooksPerSecondEndToEnd: arrivalTimes.length > 0 ? ratePerSecond(arrivalTimes.length, firstSent, arrivalTimes.at(-1)) : undefined,
    },
    latencyMs: Object.fromEntries(Object.entries(latency).map(([k, v]) => [k, summarise(v)])),
    webhookArrivals: arrivalTimes.length,
  };
}

/** Latency of decisions in the first and the last quarter of a fixed-rate run: growth means it is not keeping up. */
export function latencyDrift(notifications, results, rowsByReference) {
  const quarter = Math.floor(notifications.length / 4);
  const part = (from, to) => {
    const values = [];
    for (let i = from; i < to; i++) {
      const row = rowsByReference.get(notifications[i].reference);
      if (results[i]?.status === 202 && row?.decided_ms != null) values.push(row.decided_ms - results[i].acceptedAt);
    }
    return summarise(values);
  };
  return { firstQuarter: part(0, quarter), lastQuarter: part(notifications.length - quarter, notifications.length) };
}

/**
 * Where a paced run's time from send to decision went, deposit by deposit, from the timestamps the
 * services write: bank-ingest's `created_at` (its clock when the request reached the handler), the
 * relay's `published_at` (after the broker confirmed), the matcher's inbox `processed_at` (when
 * the decision began, after the account's lock, before its read) and `decided_at`. One machine,
 * one clock, millisecond columns. The three stages send → stored → claimed → decided add up to
 * send → decision; `tail` is their mean over the slowest 1 % of deposits, and how many distinct
 * seconds of the run those fall in (few: stalls; many: a slow stage throughout).
 */
export function stages(notifications, results, rowsByReference) {
  const stage = { sendToStored: [], storedToAccepted: [], storedToPublished: [], storedToClaimed: [], claimedToDecided: [] };
  const traced = [];
  notifications.forEach((n, i) => {
    const r = results[i];
    const row = rowsByReference.get(n.reference);
    if (r?.status !== 202 || row?.decided_ms == null || row.stored_ms == null || row.claimed_ms == null) return;
    const t = {
      sent: r.sentAt,
      total: row.decided_ms - r.sentAt,
      sendToStored: row.stored_ms - r.sentAt,
      storedToClaimed: row.claimed_ms - row.stored_ms,
      claimedToDecided: row.decided_ms - row.claimed_ms,
    };
    traced.push(t);
    stage.sendToStored.push(t.sendToStored);
    stage.storedToAccepted.push(r.acceptedAt - row.stored_ms);
    if (row.published_ms != null) stage.storedToPublished.push(row.published_ms - row.stored_ms);
    stage.storedToClaimed.push(t.storedToClaimed);
    stage.claimedToDecided.push(t.claimedToDecided);
  });
  if (traced.length === 0) return undefined;
  const firstSent = traced.reduce((m, t) => Math.min(m, t.sent), Infinity);
  traced.sort((a, b) => b.total - a.total);
  const slowest = traced.slice(0, Math.max(1, Math.ceil(traced.length / 100)));
  const mean = (key) => round(slowest.reduce((sum, t) => sum + t[key], 0) / slowest.length);
  return {
    traced: traced.length,
    stages: Object.fromEntries(Object.entries(stage).map(([k, v]) => [k, summarise(v)])),
    tail: {
      deposits: slowest.length,
      fromMs: round(slowest.at(-1).total),
      meanMs: {
        total: mean('total'),
        sendToStored: mean('sendToStored'),
        storedToClaimed: mean('storedToClaimed'),
        claimedToDecided: mean('claimedToDecided'),
      },
      seconds: new Set(slowest.map((t) => Math.floor((t.sent - firstSent) / 1000))).size,
    },
  };
}

/** Indexes first arrivals [eventId, type, transactionId, at] by deposit: { type: at }. */
export function arrivalsByTransaction(arrivals) {
  const map = new Map();
  for (const [, type, transactionId, at] of arrivals) {
    if (transactionId === null) continue;
    const entry = map.get(transactionId) ?? {};
    entry[type] = Math.min(entry[type] ?? Infinity, at);
    map.set(transactionId, entry);
  }
  return map;
}
