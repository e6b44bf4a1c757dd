import https from 'node:https';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import amqp from 'amqplib';
import pg from 'pg';
import { Redis } from 'ioredis';
import { INFRA, REPO_ROOT, createMigratedDatabase, uniqueName, cleanUpRedis } from './system.mjs';
import { PAYER_NAME, bankIngestDepositStore, matcherDecisionStatements, planPipeline, seedOrders } from './pipeline.mjs';
import { pool, ratePerSecond, round, summarise, waitUntil } from './stats.mjs';
import { CpuMeter, postgresPidsOf } from './machine.mjs';

const RELEASE_IF_OWNER = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * The bare infrastructure doing the minimum the pipeline must do per deposit, with no service code:
 * raw `pg` with prepared statements on a database of its own seeded like the pipeline's, plus the
 * per-account Redis lock.
 *
 *   ingest:     bank-ingest's own statement: INSERT transaction (ON CONFLICT DO NOTHING) and, in a
 *               CTE, its outbox row, shared as in bank-ingest with the deposits other workers
 *               stored meanwhile
 *   lock:       SET NX PX on the account's key … EVAL compare-and-delete
 *   decide:     the matcher's own two statements, no transaction around them: read the pending
 *               deposit with its candidates; write the decision (UPDATE order for a confirmation,
 *               UPDATE transaction, INSERT inbox row, events and their outbox row) as one statement,
 *               shared as in the matcher with the decisions other workers made meanwhile
 *
 * One worker per bank account, so decisions on one account are one at a time as under the lock,
 * and as many accounts at once as the pipeline has.
 */
export async function pgBaseline(config, { synchronousCommit = 'on' } = {}) {
  const database = await createMigratedDatabase('pmatch_bench_base_');
  if (synchronousCommit !== 'on') {
    // Only this throwaway database, only for new sessions: shows how much of the baseline is commit flushes.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`ALTER DATABASE "${database.name}" SET synchronous_commit = ${synchronousCommit === 'off' ? 'off' : 'on'}`);
    await admin.end();
  }
  const cpu = new CpuMeter({}, postgresPidsOf(INFRA.adminDatabaseUrl, [database.name]));
  const redis = new Redis(INFRA.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const redisPrefix = `pmatch-bench:${uniqueName('base')}:`;
  const poolSize = config.accounts;
  const db = new pg.Pool({ connectionString: database.url, max: poolSize });
  // An idle connection ended under the pool (the database dropped after a failure) must not crash the bench.
  db.on('error', () => undefined);
  try {
    await redis.connect();
    const accounts = await seedAccounts(database.url, config.accounts);
    const plan = planPipeline(
      {
        ...config,
        notifications: config.baselineDeposits,
        fixedRateSeconds: 0,
        lowRateSeconds: 0,
        afterBurstSeconds: 0,
        hotAccountNotifications: 0,
        hotAccountFixedRateSeconds: 0,
        twoMatchersNotifications: 0,
      },
      accounts,
      'base',
    );
    const seeded = await seedOrders(database.url, plan.orders);
    const deposits = plan.runs.throughput.notifications;
    const byAccount = new Map(accounts.map((a) => [a.id, []]));
    for (const d of deposits) byAccount.get(d.account.id).push(d);
    const depositWrites = depositBatches(db);
    const decisionWrites = decisionBatches(db);
    const latencies = { ingest: [], lock: [], decide: [], total: [] };
    const outcomes = { confirmed: 0, held: 0, unmatched: 0 };
    const cpuBefore = await cpu.snapshot();
    const started = Date.now();
    const deadline = started + 5 * 60_000;
    const oneDeposit = async (deposit) => {
      const t0 = performance.now();
      const transactionId = await ingest(depositWrites, deposit);
      const t1 = performance.now();
      const key = `${redisPrefix}lock:account:${deposit.account.id}`;
      const token = randomUUID();
      if ((await redis.set(key, token, 'PX', 15_000, 'NX')) !== 'OK') throw new Error('baseline lock unexpectedly taken');
      const t2 = performance.now();
      outcomes[await decide(db, decisionWrites, transactionId, deposit)] += 1;
      const t3 = performance.now();
      await redis.eval(RELEASE_IF_OWNER, 1, key, token);
      const t4 = performance.now();
      latencies.ingest.push(t1 - t0);
      latencies.lock.push(t2 - t1 + (t4 - t3));
      latencies.decide.push(t3 - t2);
      latencies.total.push(t4 - t0);
    };
    let failed = false;
    await Promise.all(
      [...byAccount.values()].map(async (queue) => {
        for (const deposit of queue) {
          // One worker's failure stops the others, so none is mid-statement when the database is dropped.
          if (failed || Date.now() > deadline) break;
          try {
            await oneDeposit(deposit);
          } catch (error) {
            failed = true;
            throw error;
          }
        }
      }),
    );
    const finished = Date.now();
    const done = latencies.total.length;
    const used = CpuMeter.diff(cpuBefore, await cpu.snapshot());
    return {
      what: `raw pg (prepared statements) + Redis lock, the pipeline statements per deposit${synchronousCommit === 'on' ? '' : `, synchronous_commit=${synchronousCommit}`}`,
      synchronousCommit,
      cpu: used,
      cpuPerDepositMs: {
        postgres: round((used.infra.postgres * 1000) / done, 2),
        redis: round((used.infra['redis-server'] * 1000) / done, 2),
        bench: round((used.bench * 1000) / done, 2),
      },
      orders: seeded.orders,
      deposits: done,
      workers: byAccount.size,
      poolSize,
      seconds: round((finished - started) / 1000, 2),
      depositsPerSecond: ratePerSecond(done, started, finished),
      outcomes,
      latencyMs: Object.fromEntries(Object.entries(latencies).map(([k, v]) => [k, summarise(v)])),
    };
  } finally {
    cpu.stop();
    await db.end();
    await cleanUpRedis(redisPrefix).catch(() => undefined);
    redis.disconnect();
    await database.drop();
  }
}

/** One organisation with `count` live bank accounts, for benches that need no merchant API. */
export async function seedAccounts(databaseUrl, count) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const orgId = `org_${uniqueName('base')}`;
    await client.query("INSERT INTO organisations (id, name, owner_email) VALUES ($1, 'baseline', 'baseline@example.com')", [orgId]);
    await client.query("INSERT INTO settings (organisation_id, mode) VALUES ($1, 'live'), ($1, 'test')", [orgId]);
    const accounts = [];
    for (let a = 0; a < count; a++) {
      const id = `ba_${uniqueName('base')}${a}`;
      await client.query(
        "INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name) VALUES ($1, $2, 'live', '0001', '001', $3, 'ﾍﾞｰｽ')",
        [id, orgId, String(4_000_000 + a)],
      );
      accounts.push({ id, organisationId: orgId });
    }
    return accounts;
  } finally {
    await client.end();
  }
}

const decision = matcherDecisionStatements();
const { BatchWriter } = createRequire(import.meta.url)(join(REPO_ROOT, 'packages', 'platform', 'dist', 'batch-writer.js'));

/**
 * Writes decisions as the matcher's `writeDecisionsInBatches` does: one alone at once, those made
 * while a write runs together in the next statement. Each item is the statement's values (one
 * array per column) for one decision; each resolves with whether its decision was written.
 */
function decisionBatches(db) {
  return new BatchWriter(async (items) => {
    const values = {};
    items.forEach((item, i) => {
      // `eventItem` numbers each event's decision within the batch.
      for (const [name, array] of Object.entries(item)) (values[name] ??= []).push(...(name === 'eventItem' ? array.map(() => i + 1) : array));
    });
    const { rows } = await db.query({ name: 'base-write-decisions', text: decision.write.text, values: decision.write.bind(values) });
    return items.map((_, i) => rows.some((row) => row.item === i + 1));
  }, decision.perStatement);
}

let sequence = 0;
const nextId = (prefix) => `${prefix}_base${process.pid}x${(++sequence).toString(36).padStart(12, '0')}`;

const depositStore = bankIngestDepositStore();

/**
 * Stores deposits as bank-ingest does, with its own statement: one alone at once, those that
 * arrive while a statement runs together in the next. Each resolves with its stored row. The
 * outbox rows it hands over are dropped: the baseline publishes its messages on its own.
 */
function depositBatches(db) {
  const sql = { rows: async (s, values) => (await db.query({ name: s.name, text: s.text, values: s.bind(values) })).rows };
  return new BatchWriter((requests) => depositStore.insert(sql, requests, () => undefined), depositStore.perStatement);
}

async function ingest(depositWrites, deposit) {
  const stored = await depositWrites.submit({
    incoming: {
      organisationId: deposit.account.organisationId,
      mode: 'live',
      bankAccountId: deposit.account.id,
      bankReference: deposit.reference,
      direction: 'deposit',
      amount: deposit.amount,
      counterparty: PAYER_NAME,
      occurredAt: new Date(),
    },
    at: new Date(),
  });
  return stored.id;
}

/** The services' own: the fields of a row of two tables side by side named with a prefix, without it. */
const { unprefixed } = createRequire(import.meta.url)(join(REPO_ROOT, 'packages', 'db', 'dist', 'rows.js'));

async function decide(db, decisionWrites, transactionId, deposit) {
  const messageId = `deposit_${transactionId}`;
  const startedAt = new Date();
  const readValues = decision.read.bind({ transactionId: [transactionId], consumer: ['matcher.deposits'], messageId: [messageId] });
  const read = (await db.query({ name: 'base-read-deposit', text: decision.read.text, values: readValues })).rows;
  const txn = { amount: read[0]['transaction.amount'], counterparty: read[0]['transaction.counterparty'], occurred_at: read[0]['transaction.occurredAt'] };
  const candidates = read
    .filter((r) => r['candidate.id'] !== null)
    .map((r) => ({ id: r['candidate.id'], payerName: r['candidate.payerName'], version: r['candidate.version'], row: r }));
  const fitting = candidates.filter((c) => c.payerName === PAYER_NAME);
  const outcome = candidates.length === 0 ? 'unmatched' : fitting.length === 1 ? 'confirmed' : 'held';
  const now = new Date();
  const explanation = {
    reason: outcome === 'confirmed' ? 'exact' : outcome,
    candidates: candidates.map((c) => ({ order_id: c.id, fit: 'exact', fit_rules: null, excluded_because: null })),
  };
  const paying = outcome === 'confirmed' ? fitting[0] : undefined;
  const payment = paying && {
    transaction_id: transactionId,
    amount: Number(txn.amount),
    counterparty: txn.counterparty,
    occurred_at: txn.occurred_at,
    matched_at: now,
    decided_by: 'auto',
    trigger: 'auto',
    reason: 'exact',
  };
  const candidateOrderIds = outcome === 'held' ? fitting.map((c) => c.id) : [];
  // The events' objects: the rows as read with what the decision changes, as the matcher makes them.
  const decided = {
    ...unprefixed(read[0], 'transaction.'),
    status: outcome,
    orderId: paying?.id ?? null,
    candidateOrderIds,
    decision: explanation,
    decidedAt: now,
    updatedAt: now,
  };
  const events = [{ type: 'transaction.deposited', data: { object: decided } }];
  if (paying)
    events.push({ type: 'order.paid', data: { object: { ...unprefixed(paying.row, 'candidate.'), status: 'paid', payment, closedAt: now, updatedAt: now } } });
  if (outcome === 'held') events.push({ type: 'transaction.held', data: { object: decided, candidate_order_ids: candidateOrderIds } });
  const eventIds = events.map(() => nextId('evt'));
  const announcement = {
    organisation_id: deposit.account.organisationId,
    mode: 'live',
    events: events.map((e, i) => ({ event_id: eventIds[i], type: e.type })),
  };
  const written = await decisionWrites.submit({
    depositId: [transactionId],
    depositVersion: [read[0].version],
    depositStatus: ['pending'],
    outcome: [outcome],
    orderId: [paying?.id ?? null],
    orderVersion: [paying?.version ?? null],
    orderStatus: [paying ? 'open' : null],
    payment: [payment ? JSON.stringify(payment) : null],
    candidateOrderIds: [JSON.stringify(candidateOrderIds)],
    decision: [JSON.stringify(explanation)],
    decidedAt: [now],
    consumer: ['matcher.deposits'],
    messageId: [messageId],
    startedAt: [startedAt],
    organisationId: [deposit.account.organisationId],
    mode: ['live'],
    bankAccountId: [deposit.account.id],
    eventItem: events.map(() => 1),
    eventId: eventIds,
    eventType: events.map((e) => e.type),
    eventData: events.map((e) => JSON.stringify(e.data)),
    outboxMessageId: [eventIds[0]],
    outboxExchange: ['events'],
    outboxRoutingKey: ['event.recorded'],
    outboxPayload: [JSON.stringify(announcement)],
    outboxHeaders: ['{}'],
  });
  if (!written) throw new Error(`the baseline's decision of ${transactionId} was not written`);
  return outcome;
}

/**
 * RabbitMQ doing what the pipeline asks of it, with amqplib and nothing else: a durable quorum
 * queue declared as the services declare theirs, persistent messages published on a confirm
 * channel in batches of up to 200 (as the outbox relay does) while a consumer with prefetch 50
 * parses and acks each one. Publishing stops at `messages` or after 60 s.
 */
export async function amqpBaseline(config) {
  const connection = await amqp.connect(INFRA.rabbitmqUrl);
  const queue = `${uniqueName('bench')}.baseline`;
  try {
    const publisher = await connection.createConfirmChannel();
    await publisher.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const consumer = await connection.createChannel();
    await consumer.prefetch(50);
    const total = config.amqpMessages;
    let consumed = 0;
    let lastConsumed = 0;
    let publishedCount = 0;
    await consumer.consume(queue, (msg) => {
      if (msg === null) return;
      JSON.parse(msg.content.toString('utf8'));
      consumer.ack(msg);
      consumed += 1;
      lastConsumed = Date.now();
    });
    const body = (i) => Buffer.from(JSON.stringify({ transaction_id: `txn_${String(i).padStart(24, '0')}`, bank_account_id: 'ba_000000000000000000000000' }));
    const started = Date.now();
    const deadline = started + 60_000;
    const BATCH = 200;
    while (publishedCount < total && Date.now() < deadline) {
      const n = Math.min(BATCH, total - publishedCount);
      for (let i = 0; i < n; i++) {
        publisher.publish('', queue, body(publishedCount + i), { persistent: true, contentType: 'application/json', messageId: `m${publishedCount + i}` });
      }
      await publisher.waitForConfirms();
      publishedCount += n;
    }
    const published = Date.now();
    await waitUntil(() => (consumed >= publishedCount ? true : undefined), { timeoutMs: 60_000, intervalMs: 20, what: 'the baseline consumer' }).catch(
      () => undefined,
    );
    await publisher.deleteQueue(queue).catch(() => undefined);
    return {
      what: 'amqplib: quorum queue, persistent messages, confirm channel batches of 200, consumer prefetch 50 acking each',
      messages: publishedCount,
      consumed,
      publishConfirmedPerSecond: ratePerSecond(publishedCount, started, published),
      endToEndPerSecond: ratePerSecond(consumed, started, lastConsumed),
    };
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/**
 * HTTPS POSTs of an event-sized signed body to the same receiver the dispatcher delivers to, over
 * keep-alive connections at the dispatcher's concurrency (16: 4 per endpoint × 4 endpoints): the
 * floor under webhook delivery, with no database work per delivery.
 */
export async function httpsBaseline(config, receiver, caPem, concurrency) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, ca: caPem });
  const body = JSON.stringify({ id: 'evt_baseline', object: 'event', type: 'baseline', data: { object: { object: 'baseline', filler: 'x'.repeat(900) } } });
  const url = new URL(receiver.url('/baseline'));
  const latencies = [];
  let errors = 0;
  const started = Date.now();
  const done = await pool(
    config.httpsRequests,
    concurrency,
    async () => {
      const t0 = performance.now();
      const ok = await new Promise((resolve) => {
        const req = https.request(
          url,
          {
            method: 'POST',
            agent,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              'webhook-id': 'msg_x',
              'webhook-timestamp': '0',
              'webhook-signature': 'v1,x',
            },
            timeout: 10_000,
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode === 200));
          },
        );
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', () => resolve(false));
        req.end(body);
      });
      if (!ok) errors += 1;
      latencies.push(performance.now() - t0);
    },
    started + 60_000,
  );
  const finished = Date.now();
  agent.destroy();
  return {
    what: `node:https keep-alive POSTs of a ~1 KB body to the bench receiver, ${concurrency} at once`,
    requests: done,
    errors,
    requestsPerSecond: ratePerSecond(done, started, finished),
    latencyMs: summarise(latencies),
  };
}
