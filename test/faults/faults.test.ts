import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { MerchantClient, REPO_ROOT, SERVICES, TestSystem, adapterCredentials, waitFor, type ServiceName } from '@pmatch/testkit';
import { HttpsReceiver } from '../../services/webhook-dispatcher/test/support/receiver';
import { TestCa } from '../../services/webhook-dispatcher/test/support/tls';
import { cutDatabaseConnections, databaseConnections, queueDepths, restartRedis, withRabbitMqStopped } from './support/infrastructure';
import { checkInvariants, workLeft, type Invariants } from './support/invariants';
import { LoadGenerator } from './support/load';

/**
 * The fault suite (docs/RELIABILITY.md): while a bounded load of live orders and signed bank
 * notifications flows, every replica of every service is SIGKILLed and restarted, one at a time
 * (while one of several replicas is down, the others must go on answering, deciding and delivering
 * before it is started again), RabbitMQ and Redis are restarted
 * and the database's connections are cut (no service may exit on its own: each recovers from
 * RabbitMQ, Redis and PostgreSQL outages inside its process); afterwards the money invariants must hold and every
 * queue must drain. The RabbitMQ and Redis it restarts are its own (support/servers.js, started by
 * test/faults/global-setup.js), so it runs beside any other test run (`pnpm test:faults`).
 *
 * Knobs (environment): FAULT_NOTIFICATIONS (least notifications sent, default 150), FAULT_RATE
 * (scenarios started per second, default 8), FAULT_ROUNDS (times the whole fault sequence runs,
 * default 1), FAULTS (which faults, default "kill,rabbitmq,redis,postgres"), FAULT_SETTLE_MS (how
 * long recovery may take after the last fault, default 60000), FAULT_REPLICAS (processes of
 * bank-ingest, the matcher and the webhook dispatcher, default 2; orders-api runs one),
 * FAULT_BROKER_OUTAGE_MS (how long RabbitMQ stays stopped at least, default 1: until every
 * replica noticed; with minutes, orders and notifications must be taken during the outage).
 */

const numberFrom = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const NOTIFICATIONS = numberFrom('FAULT_NOTIFICATIONS', 150);
const RATE = numberFrom('FAULT_RATE', 8);
const ROUNDS = numberFrom('FAULT_ROUNDS', 1);
const SETTLE_MS = numberFrom('FAULT_SETTLE_MS', 60_000);
const FAULTS = new Set((process.env.FAULTS ?? 'kill,rabbitmq,redis,postgres').split(',').map((f) => f.trim()));
const REPLICAS = numberFrom('FAULT_REPLICAS', 2);
const BROKER_OUTAGE_MS = numberFrom('FAULT_BROKER_OUTAGE_MS', 1);
/** Where the services' logs are written after a run, a folder per run. */
const LOG_DIR = join(process.env.FAULT_LOG_DIR ?? join(REPO_ROOT, '.tmp', 'faults', 'logs'), new Date().toISOString().replace(/[:.]/g, '-'));
/** The matcher asks again for deposits pending this long (services/matcher/src/use-cases/redeliver-pending.ts). */
const PENDING_GRACE_MS = 60_000;

let ca: TestCa;
let receiver: HttpsReceiver;
let system: TestSystem;
let load: LoadGenerator;
let endpointSecret: string;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  system = await TestSystem.start(
    {
      WEBHOOK_CA_FILE: ca.certFile,
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      // The receivers' answer deadline; a delivery whose dispatcher was killed mid-attempt is due again after the lease.
      DELIVERY_TIMEOUT_MS: '10000',
      DELIVERY_LEASE_MS: '12000',
      DELIVERY_POLL_INTERVAL_MS: '100',
      DELIVERY_CONCURRENCY_PER_ENDPOINT: '16',
      PENDING_SWEEP_INTERVAL_MS: '500',
      // A killed matcher's lock is gone after this; the default 15 s only makes recovery slower.
      LOCK_TTL_MS: '5000',
      RATE_LIMIT_PER_SECOND: '10000',
      RATE_LIMIT_BURST: '10000',
    },
    { replicas: { 'bank-ingest': REPLICAS, matcher: REPLICAS, 'webhook-dispatcher': REPLICAS } },
  );
  system.supervise();

  const org = await system.ops('org', 'create', '--name', '障害試験商店', '--owner-email', 'owner@example.com');
  const bankAccountIds: string[] = [];
  for (const number of ['2000001', '2000002', '2000003']) {
    const account = await system.addLiveBankAccount(String(org.id), { number, holder: 'ｼｮｳﾃﾝ' });
    bankAccountIds.push(String(account.id));
  }
  const liveKey = String((await system.ops('key', 'issue', '--org', String(org.id), '--mode', 'live', '--name', 'server')).key);
  const adapter = await system.ops('adapter', 'create', '--name', 'fault-bank', ...bankAccountIds.flatMap((id) => ['--bank-account', id]));
  const endpoint = await new MerchantClient(system.apiUrl, liveKey).request('POST', '/v1/webhook-endpoints', { url: receiver.url('/hooks') });
  if (endpoint.status !== 201) throw new Error(`webhook endpoint not created: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
  endpointSecret = endpoint.body.secret;

  load = new LoadGenerator(
    system,
    { liveKey, bankAccountIds, adapter: adapterCredentials(adapter) },
    {
      rate: RATE,
      maxInFlight: 32,
      minNotifications: NOTIFICATIONS,
      maxNotifications: NOTIFICATIONS * 20,
      requestDeadlineMs: 90_000,
    },
  );
}, 120_000);

afterAll(async () => {
  // The services' logs, for diagnosing a failed run: those of processes that exited on their own first.
  if (system) {
    mkdirSync(LOG_DIR, { recursive: true });
    for (const s of SERVICES) writeFileSync(join(LOG_DIR, `${s}.log`), `${system.exitedLogs(s)}\n--- current process:\n${system.logs(s)}`);
  }
  await system?.stop();
  await receiver?.close();
  ca?.remove();
});

interface FaultRecord {
  fault: string;
  /** From the start of the fault until every service was ready again. */
  readyInMs: number;
  /** From the start of the fault until new notifications were answered and new deposits decided. */
  recoveredInMs: number;
  /** Services that exited on their own during the fault (and were restarted by the supervisor). */
  exits: Partial<Record<ServiceName, number>>;
  detail?: string;
}

const timeline: FaultRecord[] = [];

/** A poll interval for probes that query the database: resolves with undefined ("not yet") after `ms`. */
const pause = (ms: number) => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms));

async function decidedCount(): Promise<number> {
  const rows = await system.sql<{ n: number }>("SELECT count(*)::int AS n FROM transactions WHERE status <> 'pending'");
  return rows[0]!.n;
}

/**
 * Runs one fault, then waits until the system serves again: every service ready, and new
 * notifications answered 2xx and new deposits decided after the recovery.
 */
async function fault(name: string, act: () => Promise<string | void>): Promise<void> {
  const startedAt = Date.now();
  const exitsBefore = system.supervision();
  const detail = await act();
  await system.ready(120_000).catch(async (error: unknown) => {
    throw new Error(`${String(error)} after "${name}":\n${await readiness()}`);
  });
  const readyInMs = Date.now() - startedAt;
  const answered = load.answered();
  const decided = await decidedCount();
  await waitFor(async () => (load.answered() >= answered + 3 && (await decidedCount()) >= decided + 3 ? true : await pause(100)), {
    timeoutMs: 90_000,
    what: `notifications to be answered and deposits decided again after "${name}"`,
  });
  const exitsAfter = system.supervision();
  const exits = Object.fromEntries(SERVICES.map((s) => [s, exitsAfter[s].exits - exitsBefore[s].exits]).filter(([, n]) => Number(n) > 0)) as Partial<
    Record<ServiceName, number>
  >;
  timeline.push({ fault: name, readyInMs, recoveredInMs: Date.now() - startedAt, exits, ...(detail ? { detail } : {}) });
}

/** Each replica's /readyz answer and the end of its log: what a failed recovery is diagnosed from. */
async function readiness(): Promise<string> {
  const lines = await Promise.all(
    system.everyReplica().map(async ({ service, replica, label }) => {
      const res = await fetch(`${system.adminUrl(service, replica)}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch((e: unknown) => String(e));
      const answer = typeof res === 'string' ? res : `${res.status} ${await res.text()}`;
      return `${label}: ${answer}\n${system.logs(service, replica).slice(-3_000)}`;
    }),
  );
  return lines.join('\n');
}

/**
 * SIGKILLs one replica. When the service has others, they must carry its work while it is down:
 * new notifications answered, deposits decided and events delivered, before it is started again.
 */
async function killAndRestart(service: ServiceName, replica: number): Promise<string | void> {
  await system.kill(service, replica);
  if (system.replicas(service) > 1) {
    const killedAt = Date.now();
    const [answered, decided, delivered] = [load.answered(), await decidedCount(), receiver.requests.length];
    await waitFor(
      async () =>
        load.answered() >= answered + 3 && (await decidedCount()) >= decided + 3 && receiver.requests.length >= delivered + 3 ? true : await pause(100),
      { timeoutMs: 60_000, what: `the other ${service} replicas to serve while replica ${replica} is down` },
    );
    const servedInMs = Date.now() - killedAt;
    await system.startService(service, replica);
    return `the others answered, decided and delivered without it within ${servedInMs} ms`;
  }
  await system.startService(service, replica);
}

/**
 * Restarts RabbitMQ with every replica running: each must notice (the matcher's and the
 * dispatcher's /readyz answers 503; orders-api and bank-ingest, which write to the outbox, say
 * `pmatch_broker_connected 0` and stay ready), stay the same process, and be ready and consuming
 * again once the broker is back.
 */
async function restartRabbitMq(): Promise<string> {
  const pids = system.replicaPids();
  let noticedInMs = 0;
  let during = '';
  const stoppedAt = Date.now();
  await withRabbitMqStopped(async () => {
    // Down until every replica reports it: none exits, each reconnects inside its process.
    const noticed = async (r: { service: ServiceName; replica: number }) =>
      READY_WITHOUT_BROKER.has(r.service)
        ? (await readyzStatus(r.service, r.replica)) === 200 && (await brokerConnected(r.service, r.replica)) === 0
        : (await readyzStatus(r.service, r.replica)) === 503;
    const notReady = async () => (await Promise.all(system.everyReplica().map(noticed))).every(Boolean);
    await waitFor(async () => ((await notReady()) ? true : await pause(200)), {
      timeoutMs: 30_000,
      what: 'every replica to report RabbitMQ down (orders-api and bank-ingest still ready)',
    });
    noticedInMs = Date.now() - stoppedAt;
    // A longer outage is held for its length while the load goes on: the API must keep taking work.
    const remainingMs = BROKER_OUTAGE_MS - (Date.now() - stoppedAt);
    if (remainingMs > 0) {
      const before = { orders: ordersCreated(), notifications: load.answered() };
      await pause(remainingMs);
      const taken = { orders: ordersCreated() - before.orders, notifications: load.answered() - before.notifications };
      if (taken.orders === 0 || taken.notifications === 0) {
        throw new Error(`RabbitMQ away for ${BROKER_OUTAGE_MS} ms: ${taken.orders} orders and ${taken.notifications} notifications taken meanwhile`);
      }
      during = `; while it was away (${Math.round(BROKER_OUTAGE_MS / 1000)} s) ${taken.orders} orders and ${taken.notifications} notifications were taken`;
    }
  });
  await system.ready(120_000);
  const after = system.replicaPids();
  const changed = system.everyReplica().filter(({ label }) => pids[label] === undefined || after[label] !== pids[label]);
  if (changed.length > 0)
    throw new Error(
      `RabbitMQ restart: ${changed.map((r) => r.label).join(', ')} did not keep its process (${JSON.stringify(pids)} -> ${JSON.stringify(after)})`,
    );
  return `rabbitmqctl stop_app / start_app; all ${system.everyReplica().length} processes noticed within ${noticedInMs} ms, the same processes ready again${during}`;
}

/** Scenarios whose orders were created so far. */
const ordersCreated = () => load.scenarios.filter((scenario) => scenario.orderIds.length > 0).length;

/** The services that take their work while the broker is away (docs/decisions/0165-api-and-ingest-ready-without-the-broker.md). */
const READY_WITHOUT_BROKER = new Set<ServiceName>(['orders-api', 'bank-ingest']);

/** One replica's `pmatch_broker_connected`, or undefined if it does not answer. */
async function brokerConnected(service: ServiceName, replica: number): Promise<number | undefined> {
  const text = await system.metrics(service, replica).catch(() => '');
  const line = /^pmatch_broker_connected (\d+)$/m.exec(text);
  return line === null ? undefined : Number(line[1]);
}

/** One replica's /readyz status, or 0 if it does not answer. */
async function readyzStatus(service: ServiceName, replica: number): Promise<number> {
  const res = await fetch(`${system.adminUrl(service, replica)}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
  return res?.status ?? 0;
}

async function cutConnections(): Promise<string> {
  const ended: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    // Each cut waits until the services have connected again, so every cut hits live connections.
    await waitFor(async () => ((await databaseConnections(system)) > 0 ? true : await pause(50)), { what: 'the services to reconnect to PostgreSQL' });
    ended.push(await cutDatabaseConnections(system));
  }
  return `pg_terminate_backend ended ${ended.join(' + ')} connections`;
}

/** Where undelivered events and undecided deposits are stuck: their deliveries, attempts, outbox rows and inbox rows. */
async function whereStuck(result: Invariants): Promise<string[]> {
  const eventIds = result.violations.undelivered.slice(0, 10).map((e) => e.split(' ')[0]!);
  const depositIds = result.violations.undecided.slice(0, 10).map((e) => e.split(' ')[0]!);
  const lines: string[] = [];
  for (const id of eventIds) {
    const deliveries = await system.sql(
      `SELECT d.status, d.attempt_count, d.next_attempt_at, d.updated_at,
              (SELECT json_agg(json_build_object('attempt', a.attempt, 'status', a.status_code, 'error', a.error, 'at', a.attempted_at)) FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id) AS attempts
       FROM webhook_deliveries d WHERE d.event_id = $1`,
      [id],
    );
    const outbox = await system.sql(`SELECT message_id, created_at, published_at FROM outbox WHERE payload->'events' @> $1::jsonb`, [
      JSON.stringify([{ event_id: id }]),
    ]);
    const inbox = await system.sql(`SELECT consumer, message_id, processed_at FROM inbox WHERE message_id = ANY($1)`, [outbox.map((o) => o.message_id)]);
    lines.push(`  event ${id}: deliveries ${JSON.stringify(deliveries)}; outbox ${JSON.stringify(outbox)}; inbox ${JSON.stringify(inbox)}`);
  }
  for (const id of depositIds) {
    const outbox = await system.sql(`SELECT message_id, created_at, published_at FROM outbox WHERE payload->>'transaction_id' = $1`, [id]);
    const inbox = await system.sql(`SELECT consumer, message_id, processed_at FROM inbox WHERE message_id = ANY($1)`, [outbox.map((o) => o.message_id)]);
    lines.push(`  deposit ${id}: outbox ${JSON.stringify(outbox)}; inbox ${JSON.stringify(inbox)}`);
  }
  if (lines.length > 0) lines.push(`  services' clock: ${system.now().toISOString()}`);
  return lines;
}

/** Polls what is left to do until nothing is, or the deadline passes; resolves with the last reading. */
async function settle(deadlineMs: number): Promise<Record<string, number>> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const left = await workLeft(system, receiver.requests, system.env.AMQP_PREFIX!);
    if (Object.values(left).every((n) => n === 0)) {
      // Messages a consumer holds (in flight, or waiting out a retry backoff) count only here: reading them is dear.
      const depths = Object.values(await queueDepths(system.env.AMQP_PREFIX!));
      left.unackedMessages = depths.reduce((n, d) => n + d.unacked + d.ready, 0);
      if (left.unackedMessages === 0) return left;
    }
    if (Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Deliveries waiting for a retry (an attempt failed): when the next is due, in the services' time. */
async function retriesDue(): Promise<Date | undefined> {
  const [row] = await system.sql<{ due: Date | null }>(
    "SELECT max(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending' AND attempt_count > 0",
  );
  return row?.due ?? undefined;
}

test('when services are SIGKILLed, RabbitMQ and Redis restart and database connections are cut under load, then no notification is lost, each deposit is decided once, nothing is paid twice, every event is delivered and all queues drain', async () => {
  const startedAt = Date.now();
  // The receiver and the load run in this process: a stalled event loop here would look like a slow endpoint.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  load.start();
  try {
    for (let round = 1; round <= ROUNDS; round += 1) {
      const tag = ROUNDS > 1 ? ` (round ${round})` : '';
      if (FAULTS.has('kill')) {
        for (const { service, replica, label } of system.everyReplica()) await fault(`SIGKILL ${label}${tag}`, () => killAndRestart(service, replica));
      }
      if (FAULTS.has('rabbitmq')) await fault(`RabbitMQ restart${tag}`, restartRabbitMq);
      if (FAULTS.has('redis')) await fault(`Redis restart${tag}`, async () => void (await restartRedis()));
      if (FAULTS.has('postgres')) await fault(`PostgreSQL connections cut${tag}`, cutConnections);
    }
  } finally {
    await load.finish();
  }
  const loadEndedAt = Date.now();

  let left = await settle(SETTLE_MS);
  let sweptPending = 0;
  if (left.pendingDeposits! > 0) {
    // A deposit still pending lost its message (dead-lettered or never delivered): the matcher's
    // sweep asks for it again after the grace period, which the test clock skips.
    sweptPending = left.pendingDeposits!;
    system.advanceClock(PENDING_GRACE_MS + 1_000);
    left = await settle(SETTLE_MS);
  }
  let retriedDeliveries = 0;
  const due = await retriesDue();
  if (left.undeliveredEvents! > 0 && due !== undefined) {
    // A failed attempt is retried on the retry schedule (the first retry a minute later): the
    // test clock skips the wait instead of the suite sleeping through it.
    retriedDeliveries = left.undeliveredEvents!;
    system.advanceClock(Math.max(0, due.getTime() - system.now().getTime()) + 1_000);
    left = await settle(SETTLE_MS);
  }
  const result = await checkInvariants(system, load, receiver.requests, system.env.AMQP_PREFIX!);
  const settledAt = Date.now();

  const badSignatures = receiver.requests.filter((r) => {
    try {
      new Webhook(endpointSecret).verify(r.body, r.headers as Record<string, string>);
      return false;
    } catch {
      return true;
    }
  });
  const stuck = await whereStuck(result);
  const supervision = system.supervision();
  // Why they exited: the error line of each exited process's last words (e.g. an unhandled 'error' event).
  const exitReasons = SERVICES.flatMap((s) =>
    system
      .exitedLogs(s)
      .split(/^--- exited on its own /m)
      .slice(1)
      .map(
        (chunk) =>
          `${s} exited ${chunk.slice(0, chunk.indexOf(':'))}: ${chunk.match(/^(?:\w*Error|error): .*$/m)?.[0] ?? chunk.match(/"msg":"([^"]*)"/)?.[1] ?? 'no error line'}`,
      ),
  );
  // No fault may end a process: a killed one is restarted by the test, every other outage is
  // recovered from inside the process.
  const unexpectedExits = timeline
    .filter((t) => Object.keys(t.exits).length > 0)
    .map((t) => `${t.fault}: ${JSON.stringify(t.exits)}`)
    .concat(timeline.some((t) => Object.keys(t.exits).length > 0) ? exitReasons : []);

  console.log(
    [
      'fault suite:',
      `  load: ${RATE}/s, at least ${NOTIFICATIONS} notifications, ${ROUNDS} round(s), faults: ${[...FAULTS].join(', ')}; ` +
        `replicas: ${SERVICES.map((s) => `${s} ${system.replicas(s)}`).join(', ')}`,
      ...timeline.map(
        (t) =>
          `  ${t.fault.padEnd(40)} ready in ${String(t.readyInMs).padStart(6)} ms, serving in ${String(t.recoveredInMs).padStart(6)} ms` +
          (Object.keys(t.exits).length ? `; exited on their own: ${JSON.stringify(t.exits)}` : '') +
          (t.detail ? `; ${t.detail}` : ''),
      ),
      `  notifications sent ${result.counts.notificationsSent}, answered 2xx ${result.counts.notificationsAnswered2xx}, ` +
        `stored ${result.counts.stored}, decided ${result.counts.decided} ${JSON.stringify(result.counts.decisions)}`,
      `  requests: ${result.counts.requestAttempts} attempts, ${result.counts.unansweredAttempts} unanswered or 5xx (retried); ` +
        `scenarios ${result.counts.scenarios} (${result.counts.abandonedScenarios} abandoned); orders created ${result.counts.ordersCreated}, paid ${result.counts.ordersPaid}`,
      `  events recorded ${result.counts.eventsRecorded}, delivered ${result.counts.eventsDelivered} ` +
        `(${result.counts.webhookRequests} webhook requests, ${badSignatures.length} with a bad signature); ` +
        `failed delivery attempts ${JSON.stringify(result.counts.failedAttempts)}`,
      `  test process event loop delay: max ${Math.round(loopDelay.max / 1e6)} ms, p99 ${Math.round(loopDelay.percentile(99) / 1e6)} ms`,
      `  deposits that needed the pending sweep: ${sweptPending}; events that needed a delivery retry: ${retriedDeliveries}; left after settling: ${JSON.stringify(left)}`,
      `  supervisor: ${JSON.stringify(supervision)}; services' logs: ${LOG_DIR}`,
      `  timings: faults under load ${loadEndedAt - startedAt} ms, settled ${settledAt - loadEndedAt} ms after the load ended`,
      ...Object.entries(result.violations)
        .filter(([, list]) => list.length > 0)
        .map(([name, list]) => `  VIOLATION ${name} (${list.length}): ${list.slice(0, 10).join('; ')}`),
      ...stuck,
    ].join('\n'),
  );

  // Every notification sent was answered 2xx in the end: none dropped, none abandoned with its scenario.
  expect(result.counts.notificationsSent).toBeGreaterThanOrEqual(NOTIFICATIONS);
  expect(result.violations.unanswered).toEqual([]);
  expect(result.violations.abandonedScenarios).toEqual([]);
  expect(result.counts.notificationsAnswered2xx).toBe(result.counts.notificationsSent);
  expect(result.violations.lostOrDuplicated).toEqual([]);
  expect(result.violations.undecided).toEqual([]);
  expect(result.violations.depositedEvents).toEqual([]);
  expect(result.violations.decidedOnce).toEqual([]);
  expect(result.violations.doublePaidOrders).toEqual([]);
  expect(result.violations.doubleUsedDeposits).toEqual([]);
  expect(result.violations.orderPaidEvents).toEqual([]);
  expect(result.violations.wrongDecisions).toEqual([]);
  expect(result.violations.refused).toEqual([]);
  expect(result.violations.internalErrors).toEqual([]);
  expect(result.violations.unpublished).toEqual([]);
  expect(result.violations.undrainedQueues).toEqual([]);
  expect(result.violations.undelivered).toEqual([]);
  expect(badSignatures.map((r) => r.headers['webhook-id'])).toEqual([]);
  expect(sweptPending).toBe(0);
  expect(unexpectedExits).toEqual([]);
});
