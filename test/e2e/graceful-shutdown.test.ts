import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { QUEUES } from '@pmatch/contracts';
import {
  DATABASE_ROLE,
  TestSystem,
  adapterCredentials,
  adapterHeaders,
  api,
  type AdapterCredentials,
  waitFor,
  type ServiceName,
  type SqlSession,
} from '@pmatch/testkit';
import { TestCa } from '../../services/webhook-dispatcher/test/support/tls';

/**
 * SIGTERM drains: what a service holds when the signal comes is finished (or, for messages it had
 * not started, left in the queue), nothing is lost, nothing is done twice, and the process exits 0.
 * Each test holds work inside the service on purpose, with a table lock the work must wait for, so
 * "in flight at SIGTERM" is a fact read from pg_stat_activity rather than a hope about timing; and
 * each proves its point before anything is restarted.
 */

let system: TestSystem;
let ca: TestCa;
/** Holds the table locks. */
let session: SqlSession;
/** Reads pg_stat_activity and the results: apart from `session`, whose open transaction would see one frozen statistics snapshot. */
let monitor: SqlSession;

beforeAll(async () => {
  ca = TestCa.create();
  system = await TestSystem.start({
    WEBHOOK_CA_FILE: ca.certFile,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    // Few messages in the matcher's hands, so some deposits are still in the queue at SIGTERM.
    MATCHER_PREFETCH: '3',
  });
  session = await system.sqlSession();
  monitor = await system.sqlSession();
}, 120_000);

afterAll(async () => {
  await session?.close();
  await monitor?.close();
  await system?.stop();
  ca?.remove();
});

let locked = false;

/** Holds `table` locked against writes until the returned function is called (or the test ends). */
async function lockWrites(table: string): Promise<() => Promise<void>> {
  await session.query('BEGIN');
  locked = true;
  await session.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
  return unlock;
}

async function unlock(): Promise<void> {
  if (!locked) return;
  locked = false;
  await session.query('ROLLBACK');
}

afterEach(async () => {
  // A failed test must not leave a table locked for the next one.
  await unlock();
});

/** Statements of a service waiting for a lock: work it has taken in and not finished. */
async function waiting(service: ServiceName): Promise<number> {
  const [row] = await monitor.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND usename = $1 AND wait_event_type = 'Lock'`,
    [DATABASE_ROLE[service]],
  );
  return row!.n;
}

/**
 * HTTP requests a service has received on its public port and not yet answered, from its metrics
 * (read on the admin port, so the scrape is not among them): bank-ingest and orders-api hold the
 * writes that arrive while one statement writes others in memory, where no database view sees them.
 */
async function requestsInFlight(service: ServiceName): Promise<number> {
  const metrics = await system.metrics(service);
  const line = /^http_requests_in_flight (\d+)$/m.exec(metrics);
  if (line === null) throw new Error(`${service} reports no http_requests_in_flight`);
  return Number(line[1]);
}

/** Resolves once the service's port refuses new connections: it has stopped accepting (a kept-alive connection would not tell). */
async function refusing(service: ServiceName): Promise<void> {
  const port = Number(new URL(system.url(service)).port);
  const refused = () =>
    new Promise<true | undefined>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once('error', () => resolve(true));
    });
  await waitFor(refused, { what: `${service} to stop accepting` });
}

type Outcome = { status: number; body: any } | { error: string };
const settle = (request: Promise<{ status: number; body: any }>): Promise<Outcome> =>
  request.then(
    (r) => ({ status: r.status, body: r.body }),
    (e: unknown) => ({ error: String(e) }),
  );

describe('graceful shutdown', () => {
  test('when orders-api gets SIGTERM with requests in flight, then each of them completes and is stored once, and requests after it stopped accepting are refused', async () => {
    const { client } = await system.createMerchant();
    const run = randomUUID().slice(0, 8);
    const order = (name: string) => client.request('POST', '/v1/orders', { amount: 8000, payer_name: 'タナカ', external_id: `${run}-${name}`, item_name: 'x' });
    const release = await lockWrites('orders');
    const inFlight = ['a', 'b', 'c', 'd'].map((name) => settle(order(name)));
    // The first order's insert waits for the lock; the orders that came while it was written wait
    // in memory to go together in the next statement.
    await waitFor(async () => ((await waiting('orders-api')) >= 1 && (await requestsInFlight('orders-api')) >= 4 ? true : undefined), {
      what: 'four orders inside orders-api, one insert waiting for the lock',
    });

    const exit = system.terminate('orders-api');
    await refusing('orders-api');
    const afterClose = await Promise.all(['late-1', 'late-2'].map((name) => settle(order(name))));
    await release();
    const answers = await Promise.all(inFlight);

    expect(await exit).toBe(0);
    expect(answers.map((a) => ('status' in a ? a.status : a.error))).toEqual([201, 201, 201, 201]);
    expect(afterClose.every((a) => 'error' in a)).toBe(true);
    const stored = await monitor.query<{ external_id: string; id: string }>(
      'SELECT external_id, id FROM orders WHERE external_id LIKE $1 ORDER BY external_id',
      [`${run}-%`],
    );
    expect(stored.map((o) => o.external_id)).toEqual(['a', 'b', 'c', 'd'].map((n) => `${run}-${n}`));
    expect(stored.map((o) => o.id).sort()).toEqual(answers.map((a) => (a as { body: any }).body.id).sort());
    await system.startService('orders-api');
  });

  test('when the matcher gets SIGTERM while deciding, then the deposits in its hands are decided once before it exits, and the rest wait in the queue untouched', async () => {
    const { orgId } = await system.createMerchant();
    const accounts: string[] = [];
    for (const number of ['5100001', '5100002', '5100003']) {
      accounts.push(String((await system.addLiveBankAccount(orgId, { number, holder: 'ﾄﾞﾚｲﾝ' })).id));
    }
    const secret = adapterCredentials(await system.ops('adapter', 'create', '--name', 'drain-bank', ...accounts.flatMap((id) => ['--bank-account', id])));
    const release = await lockWrites('events');
    const deposits: string[] = [];
    for (let i = 0; i < 8; i += 1) deposits.push(await notify(secret, accounts[i % accounts.length]!, 9000 + i));
    // Every deposit.received is in the broker (none left in the outbox), and the matcher holds what its prefetch allows.
    await waitFor(
      async () =>
        (await monitor.query("SELECT 1 FROM outbox WHERE routing_key = 'deposit.received' AND published_at IS NULL")).length === 0 ? true : undefined,
      {
        what: 'the deposits to be published',
      },
    );
    await waitFor(async () => ((await waiting('matcher')) >= 1 ? true : undefined), { what: 'a decision waiting inside the matcher' });

    const exit = system.terminate('matcher');
    await refusing('matcher');
    await release();

    expect(await exit).toBe(0);
    const rows = await monitor.query<{ id: string; status: string; deposited: number; processed: number }>(
      `SELECT t.id, t.status,
              (SELECT count(*)::int FROM events e WHERE e.type = 'transaction.deposited' AND e.data->'object'->>'id' = t.id) AS deposited,
              (SELECT count(*)::int FROM inbox i WHERE i.consumer = 'matcher.deposits' AND i.message_id = 'deposit_' || t.id) AS processed
       FROM transactions t WHERE t.id = ANY($1)`,
      [deposits],
    );
    const decided = rows.filter((r) => r.status !== 'pending');
    const pending = rows.filter((r) => r.status === 'pending');
    // What it held was finished: at least the decision that was waiting, each exactly once.
    expect(decided.length).toBeGreaterThanOrEqual(1);
    expect(decided.every((r) => r.deposited === 1 && r.processed === 1)).toBe(true);
    // What it had not taken is untouched, and every one of those still has its message in the queue.
    expect(pending.every((r) => r.deposited === 0 && r.processed === 0)).toBe(true);
    expect(pending.length).toBeGreaterThan(0);
    expect(await system.queueState(QUEUES.matcherDeposits)).toEqual({ ready: pending.length, consumers: 0 });

    await system.startService('matcher');
    await waitFor(
      async () => ((await monitor.query("SELECT 1 FROM transactions WHERE id = ANY($1) AND status = 'pending'", [deposits])).length === 0 ? true : undefined),
      {
        what: 'the waiting deposits to be decided by the next matcher',
      },
    );
  });

  test('when bank-ingest gets SIGTERM with notifications and a test deposit in flight, then each is stored once and answered, and notifications after it stopped accepting are refused', async () => {
    const { orgId, client } = await system.createMerchant();
    const account = String((await system.addLiveBankAccount(orgId, { number: '5200001', holder: 'ﾄﾞﾚｲﾝ' })).id);
    const secret = adapterCredentials(await system.ops('adapter', 'create', '--name', 'drain-bank-2', '--bank-account', account));
    const release = await lockWrites('transactions');
    const notifications = [1, 2, 3].map((i) => settle(notifyRaw(secret, account, 9100 + i)));
    const testDeposit = settle(client.request('POST', '/v1/test/deposits', { amount: 9199, counterparty: 'ドレイン' }));
    // One statement storing notifications and one storing the test deposit wait for the lock; the
    // notifications that came while the first was stored wait in memory for it.
    await waitFor(async () => ((await waiting('bank-ingest')) >= 2 && (await requestsInFlight('bank-ingest')) >= 3 ? true : undefined), {
      what: 'three notifications and a test deposit inside bank-ingest',
    });

    const exit = system.terminate('bank-ingest');
    await refusing('bank-ingest');
    const afterClose = await settle(notifyRaw(secret, account, 9150));
    await release();
    const answers = await Promise.all(notifications);

    expect(await exit).toBe(0);
    expect(answers.map((a) => ('status' in a ? a.status : a.error))).toEqual([202, 202, 202]);
    expect('error' in afterClose).toBe(true);
    const deposit = await testDeposit;
    expect('status' in deposit && deposit.status).toBe(201);
    const stored = await monitor.query<{ amount: string; n: number }>(
      'SELECT amount::text, count(*)::int AS n FROM transactions WHERE organisation_id = $1 GROUP BY amount ORDER BY amount',
      [orgId],
    );
    expect(stored).toEqual([
      { amount: '9101', n: 1 },
      { amount: '9102', n: 1 },
      { amount: '9103', n: 1 },
      { amount: '9199', n: 1 },
    ]);
    await system.startService('bank-ingest');
  });

  test('when the webhook dispatcher gets SIGTERM with a delivery in flight, then the delivery finishes and is recorded once before it exits', async () => {
    const receiver = await HoldingReceiver.start(ca);
    try {
      const { client } = await system.createMerchant();
      const endpoint = await client.request('POST', '/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['order.created'] });
      expect(endpoint.status).toBe(201);
      const order = await client.createOrder();
      const [event] = await client.events('order.created');
      expect(event.data.object.id).toBe(order.id);
      await waitFor(() => (receiver.held.length === 1 ? true : undefined), { what: 'the delivery to reach the receiver' });

      const exit = system.terminate('webhook-dispatcher');
      await refusing('webhook-dispatcher');
      receiver.answerAll(200);

      expect(await exit).toBe(0);
      expect(receiver.received).toEqual([event.id]);
      new Webhook(endpoint.body.secret).verify(receiver.bodies[0]!, receiver.headers[0]!);
      const attempts = await monitor.query<{ status: string; status_code: number }>(
        `SELECT d.status, a.status_code FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id WHERE d.event_id = $1`,
        [event.id],
      );
      expect(attempts).toEqual([{ status: 'succeeded', status_code: 200 }]);
    } finally {
      await receiver.close();
      await system.startService('webhook-dispatcher');
    }
  });
});

function notifyRaw(secret: AdapterCredentials, bankAccountId: string, amount: number): Promise<{ status: number; body: any }> {
  const body = JSON.stringify({
    bank_account_id: bankAccountId,
    bank_reference: randomUUID(),
    direction: 'deposit',
    amount,
    counterparty: 'ﾄﾞﾚｲﾝ',
    occurred_at: new Date().toISOString(),
  });
  return api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', {
    rawBody: body,
    headers: { 'content-type': 'application/json', ...adapterHeaders(secret, body) },
  });
}

async function notify(secret: AdapterCredentials, bankAccountId: string, amount: number): Promise<string> {
  const res = await notifyRaw(secret, bankAccountId, amount);
  if (res.status !== 202) throw new Error(`notification not stored: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.transaction_id;
}

/** An HTTPS endpoint that holds every request until told to answer: a delivery in flight for as long as a test needs. */
class HoldingReceiver {
  readonly held: ServerResponse[] = [];
  readonly received: string[] = [];
  readonly bodies: string[] = [];
  readonly headers: Record<string, string>[] = [];

  private constructor(private readonly server: Server) {}

  static async start(ca: TestCa): Promise<HoldingReceiver> {
    let receiver: HoldingReceiver | undefined;
    const server = createServer(ca.issueServerCertificate(), (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver!.received.push(String(req.headers['webhook-id']));
        receiver!.bodies.push(Buffer.concat(chunks).toString('utf8'));
        receiver!.headers.push(req.headers as Record<string, string>);
        receiver!.held.push(res);
      });
    });
    receiver = new HoldingReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  answerAll(status: number): void {
    for (const res of this.held.splice(0)) res.writeHead(status).end('ok');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
