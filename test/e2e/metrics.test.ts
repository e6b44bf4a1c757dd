import amqp from 'amqplib';
import { QUEUES } from '@pmatch/contracts';
import { adapterCredentials, RABBITMQ_URL, TestSystem, waitFor, zenginFile, type MerchantClient, type ServiceName } from '@pmatch/testkit';
import { liveAccount, notify, signedPost } from './support/bank';

/**
 * The metrics an operator scales and is paged on, read from the services' admin ports while
 * deposits flow through the real services.
 */
let system: TestSystem;
let merchant: MerchantClient;
let orgId: string;

beforeAll(async () => {
  system = await TestSystem.start({
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    // Retries wait for the poll, which never comes during the test: a due retry stays due.
    DELIVERY_POLL_INTERVAL_MS: '3600000',
  });
  ({ client: merchant, orgId } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
});

/** The sum of a metric's samples whose labels include `labels` (a histogram's `_count` is a metric here). */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_:][a-z0-9_:]*)(?:\{(.*)\})? (\S+)$/i.exec(line);
    if (match?.[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) sum += Number(match[3]);
  }
  return sum;
}

async function metric(service: ServiceName, name: string, labels: Record<string, string> = {}): Promise<number> {
  return valueOf(await system.metrics(service), name, labels);
}

async function decided(transactionId: string): Promise<string> {
  return waitFor(
    async () => {
      const [row] = await system.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [transactionId]);
      return row !== undefined && row.status !== 'pending' ? row.status : undefined;
    },
    { what: `transaction ${transactionId} to be decided` },
  );
}

test('when deposits arrive by test deposit, notification and statement, then the decision, backlog, ingestion, latency and lock metrics move with them', async () => {
  // A failing webhook endpoint: its deliveries fail now and are retried later (the last test).
  expect((await merchant.request('POST', '/v1/webhook-endpoints', { url: 'https://127.0.0.1:9/hooks' })).status).toBe(201);
  const before = { matcher: await system.metrics('matcher'), ingest: await system.metrics('bank-ingest') };

  await merchant.request('POST', '/v1/orders', { amount: 5000, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ', external_id: 'M-1', item_name: 'お米' });
  const confirmed = await merchant.request('POST', '/v1/test/deposits', { amount: 5000, counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
  for (const id of ['M-2', 'M-3']) await merchant.request('POST', '/v1/orders', { amount: 3000, payer_name: 'ｽｽﾞｷ ﾊﾅｺ', external_id: id, item_name: 'お茶' });
  const held = await merchant.request('POST', '/v1/test/deposits', { amount: 3000, counterparty: 'ｽｽﾞｷ ﾊﾅｺ' });
  const unmatched = await merchant.request('POST', '/v1/test/deposits', { amount: 7777, counterparty: 'ﾀﾞﾚﾓ ｲﾅｲ' });
  expect([confirmed.body.status, held.body.status, unmatched.body.status]).toEqual(['confirmed', 'held', 'unmatched']);

  const account = await liveAccount(system, orgId, { number: '7100001' });
  const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', account);
  const notified = await notify(system, adapterCredentials(adapter), {
    bank_reference: 'metrics-1',
    bank_account_id: account,
    direction: 'deposit',
    amount: 4200,
    counterparty: 'ﾀﾅｶ',
    occurred_at: new Date().toISOString(),
  });
  expect(notified.status).toBe(202);
  const today = new Date(system.now().getTime() + 9 * 3_600_000).toISOString().slice(0, 10);
  const file = zenginFile({ kind: '03', accounts: [{ accountNumber: '7100001', records: [{ date: today, amount: 6300, name: 'ｻﾄｳ', reference: 1 }] }] });
  const imported = await signedPost(system, '/ingest/v1/statements', adapterCredentials(adapter), file, 'application/octet-stream');
  expect(imported.status).toBe(200);
  expect(await decided(notified.body.transaction_id)).toBe('unmatched');
  const [fromStatement] = await system.sql<{ id: string }>('SELECT id FROM transactions WHERE bank_account_id = $1 AND amount = 6300', [account]);
  expect(await decided(fromStatement!.id)).toBe('unmatched');

  const after = { matcher: await system.metrics('matcher'), ingest: await system.metrics('bank-ingest') };
  const change = (service: 'matcher' | 'ingest', name: string, labels: Record<string, string> = {}) =>
    valueOf(after[service], name, labels) - valueOf(before[service], name, labels);
  expect({
    confirmed: change('matcher', 'pmatch_decisions_total', { outcome: 'confirmed' }),
    held: change('matcher', 'pmatch_decisions_total', { outcome: 'held', reason: 'several_orders_fit' }),
    unmatched: change('matcher', 'pmatch_decisions_total', { outcome: 'unmatched', reason: 'no_order_with_amount' }),
    latencies: change('matcher', 'pmatch_decision_latency_seconds_count'),
    lockWaits: change('matcher', 'pmatch_lock_wait_seconds_count'),
    heldBacklog: change('matcher', 'pmatch_deposits_backlog', { status: 'held' }),
    unmatchedBacklog: change('matcher', 'pmatch_deposits_backlog', { status: 'unmatched' }),
    fromTests: change('ingest', 'pmatch_deposits_ingested_total', { source: 'test' }),
    fromNotifications: change('ingest', 'pmatch_deposits_ingested_total', { source: 'notification' }),
    fromStatements: change('ingest', 'pmatch_deposits_ingested_total', { source: 'statement' }),
  }).toEqual({
    confirmed: 1,
    held: 1,
    unmatched: 3,
    latencies: 5,
    lockWaits: expect.any(Number),
    heldBacklog: 1,
    unmatchedBacklog: 3,
    fromTests: 3,
    fromNotifications: 1,
    fromStatements: 1,
  });
  // Every decision waited for its account's lock (new orders look for waiting deposits under it too).
  expect(change('matcher', 'pmatch_lock_wait_seconds_count')).toBeGreaterThanOrEqual(5);
  // The latency is the time from storing to deciding: under a minute here, never negative.
  expect(valueOf(after.matcher, 'pmatch_decision_latency_seconds_sum')).toBeLessThan(60 * 5);

  // Resolving the held deposit takes it out of the backlog.
  await merchant.request('POST', `/v1/transactions/${held.body.id}/match`, { order_id: held.body.candidate_order_ids[0] });
  expect(await metric('matcher', 'pmatch_deposits_backlog', { status: 'held' })).toBe(valueOf(before.matcher, 'pmatch_deposits_backlog', { status: 'held' }));
});

test('when an outbox row waits unpublished, then every service with a relay reports its age; once it is gone, the age is back to 0', async () => {
  await waitFor(async () => ((await metric('bank-ingest', 'pmatch_outbox_oldest_unpublished_age_seconds')) === 0 ? true : undefined), {
    what: 'an empty outbox',
  });
  // Leased for an hour, so no relay publishes it while the test reads.
  await system.sql(`INSERT INTO outbox (message_id, exchange, routing_key, payload, created_at, leased_until)
                    VALUES ('msg_metrics_waiting', 'pmatch.events', 'nothing', '{}', now() - interval '2 minutes', now() + interval '1 hour')`);
  for (const service of ['orders-api', 'bank-ingest', 'matcher'] as const) {
    expect(await metric(service, 'pmatch_outbox_oldest_unpublished_age_seconds')).toBeGreaterThanOrEqual(120);
  }
  await system.sql(`DELETE FROM outbox WHERE message_id = 'msg_metrics_waiting'`);
  expect(await metric('matcher', 'pmatch_outbox_oldest_unpublished_age_seconds')).toBe(0);
});

test('when a message that fits no contract reaches the matcher, then its dead-letter queue depth is reported', async () => {
  const queue = `${system.env.AMQP_PREFIX}${QUEUES.matcherCommands}.dead`;
  expect(await metric('matcher', 'pmatch_dlq_messages', { queue })).toBe(0);
  const connection = await amqp.connect(RABBITMQ_URL);
  try {
    const channel = await connection.createConfirmChannel();
    channel.sendToQueue(`${system.env.AMQP_PREFIX}${QUEUES.matcherCommands}`, Buffer.from('{"not":"a command"}'), {
      messageId: 'msg_metrics_malformed',
      persistent: true,
    });
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
  await waitFor(async () => ((await metric('matcher', 'pmatch_dlq_messages', { queue })) === 1 ? true : undefined), { what: 'the dead letter to be counted' });
});

test('when failed webhook deliveries come due, then the backlog and its oldest wait are reported; when their endpoint is switched off, they leave the backlog and the endpoint is counted', async () => {
  expect(await metric('webhook-dispatcher', 'pmatch_webhook_backlog')).toBe(0);
  await waitFor(
    async () => {
      const [row] = await system.sql<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND attempt_count >= 1");
      return row!.n > 0 ? row!.n : undefined;
    },
    { what: 'a failed first attempt' },
  );
  system.advanceClock(10 * 60_000);
  const due = await metric('webhook-dispatcher', 'pmatch_webhook_backlog');
  expect(due).toBeGreaterThan(0);
  // Retried a minute (and up to 10 % more) after the first attempt, ten minutes ago.
  expect(await metric('webhook-dispatcher', 'pmatch_webhook_oldest_due_age_seconds')).toBeGreaterThanOrEqual(8 * 60);
  expect(await metric('webhook-dispatcher', 'pmatch_webhook_endpoints_disabled')).toBe(0);

  await system.sql("UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing' WHERE organisation_id = $1", [orgId]);
  expect(await metric('webhook-dispatcher', 'pmatch_webhook_backlog')).toBe(0);
  expect(await metric('webhook-dispatcher', 'pmatch_webhook_oldest_due_age_seconds')).toBe(0);
  expect(await metric('webhook-dispatcher', 'pmatch_webhook_endpoints_disabled')).toBe(1);
});
