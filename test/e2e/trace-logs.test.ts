import { adapterCredentials, TestSystem, waitFor, type MerchantClient, type ServiceName } from '@pmatch/testkit';
import { liveAccount, notify } from './support/bank';

/**
 * Log lines that tie together: one access line per HTTP request, and one trace id on every line
 * about one deposit, in every service it passes through (W3C traceparent in HTTP and AMQP headers).
 */
let system: TestSystem;
let merchant: MerchantClient;
let orgId: string;

beforeAll(async () => {
  system = await TestSystem.start({ LOG_LEVEL: 'info' });
  ({ client: merchant, orgId } = await system.createMerchant());
});

afterAll(async () => {
  await system?.stop();
});

type LogLine = Record<string, unknown> & { msg?: string; trace_id?: string };

function lines(service: ServiceName): LogLine[] {
  return system
    .logs(service)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** The first line of `service` that `matches`, once it has been written. */
function logged(service: ServiceName, what: string, matches: (line: LogLine) => boolean): Promise<LogLine> {
  return waitFor(async () => lines(service).find(matches), { what: `${service} to log ${what}` });
}

test('when a request carries a traceparent, then the trace is continued: its access line, the decision in the matcher and the events in the dispatcher share its trace id', async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const res = await merchant.request(
    'POST',
    '/v1/test/deposits',
    { amount: 2500, counterparty: 'ﾄﾚｰｽ ﾀﾛｳ' },
    { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
  );
  expect(res.body.status).toBe('unmatched');
  const requestId = res.headers.get('request-id');

  const access = await logged('orders-api', 'the access line', (l) => l.msg === 'request' && l.request_id === requestId);
  expect(access).toMatchObject({ method: 'POST', route: '/v1/test/deposits', status: res.status, trace_id: traceId, service: 'orders-api' });
  expect(typeof access.duration_ms).toBe('number');
  // A span of its own, child of the caller's.
  expect(access.span_id).toMatch(/^[0-9a-f]{16}$/);
  expect(access.span_id).not.toBe('00f067aa0ba902b7');

  const decision = await logged('matcher', 'the decision', (l) => l.msg === 'deposit decided' && l.transactionId === res.body.id);
  expect(decision).toMatchObject({ outcome: 'unmatched', trace_id: traceId });
  await logged('webhook-dispatcher', 'the events of the trace', (l) => l.msg === 'events received' && l.trace_id === traceId);
});

test('when a bank notification arrives without a traceparent, then a trace begins there and the matcher logs its decision in it', async () => {
  const account = await liveAccount(system, orgId, { number: '7300001' });
  const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', account);
  const res = await notify(system, adapterCredentials(adapter), {
    bank_reference: 'trace-1',
    bank_account_id: account,
    direction: 'deposit',
    amount: 3100,
    counterparty: 'ﾀﾅｶ',
    occurred_at: new Date().toISOString(),
  });
  expect(res.status).toBe(202);

  const access = await logged('bank-ingest', 'the access line', (l) => l.msg === 'request' && l.request_id === res.headers.get('request-id'));
  expect(access).toMatchObject({ method: 'POST', route: '/ingest/v1/notifications', status: 202 });
  expect(access.trace_id).toMatch(/^[0-9a-f]{32}$/);
  const decision = await logged('matcher', 'the decision', (l) => l.msg === 'deposit decided' && l.transactionId === res.body.transaction_id);
  expect(decision.trace_id).toBe(access.trace_id);
});

test('when the admin port is scraped or probed, then no access line is written for it, and the public port answers 404 to those paths', async () => {
  const before = lines('orders-api').filter((l) => l.msg === 'request').length;
  for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${system.adminUrl('orders-api')}${path}`)).status).toBe(200);
  const missing = await fetch(`${system.apiUrl}/metrics`);
  expect(missing.status).toBe(404);
  await logged('orders-api', 'the 404', (l) => l.msg === 'request' && l.request_id === missing.headers.get('request-id'));
  expect(lines('orders-api').filter((l) => l.msg === 'request').length).toBe(before + 1);
});
