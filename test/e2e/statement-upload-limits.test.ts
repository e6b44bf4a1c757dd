import { request } from 'node:http';
import { TestSystem, adapterCredentials, adapterHeaders, type AdapterCredentials } from '@pmatch/testkit';
import { liveAccount } from './support/bank';

/**
 * Statement uploads are counted before their body is read: per client address (whoever sends,
 * named adapter or not) and per adapter id (from whichever address). Client addresses are loopback
 * aliases (Linux answers on all of 127.0.0.0/8). The refusal limit of bank-ingest (400/401/413 per
 * address) is left far above, so each 429 here is the upload limit's.
 */

/** Three uploads, then one more every 100 s: none comes back during the test. */
const UPLOADS_BURST = 3;

let system: TestSystem;
let adapter: AdapterCredentials;

beforeAll(async () => {
  system = await TestSystem.start({
    STATEMENT_LIMIT_PER_SECOND: '0.01',
    STATEMENT_LIMIT_BURST: String(UPLOADS_BURST),
    REFUSAL_LIMIT_PER_SECOND: '100',
    REFUSAL_LIMIT_BURST: '1000',
  });
  const { orgId } = await system.createMerchant();
  const account = await liveAccount(system, orgId, { number: '5550001' });
  adapter = adapterCredentials(await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', account));
});

afterAll(async () => {
  await system?.stop();
});

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { error?: { code?: string; message?: string } };
}

/** One statement upload on a new connection from the address `from`. */
function upload(from: string, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${system.url('bank-ingest')}/ingest/v1/statements`,
      { method: 'POST', headers: { 'content-type': 'application/xml', ...headers }, localAddress: from, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Not a statement: a signed upload of it is refused 422 once its body is read. */
const NOT_A_STATEMENT = '<Document>not a statement</Document>';

test('when one address sends more statement uploads than its allowance, naming no adapter, then the next are 429 before any is authenticated', async () => {
  const answers: Answer[] = [];
  for (let i = 0; i < UPLOADS_BURST + 2; i += 1) answers.push(await upload('127.0.0.51', {}, NOT_A_STATEMENT));

  expect(answers.slice(0, UPLOADS_BURST).map((a) => a.status)).toEqual(Array(UPLOADS_BURST).fill(401));
  for (const refused of answers.slice(UPLOADS_BURST)) {
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refused.body.error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('from this address') });
  }
  // Another address still has its own allowance.
  expect((await upload('127.0.0.52', {}, NOT_A_STATEMENT)).status).toBe(401);
});

test('when one adapter sends more statement uploads than its allowance from several addresses, then the next is 429 for that adapter before its body is read', async () => {
  const signed = () => adapterHeaders(adapter, NOT_A_STATEMENT);
  const answers: Answer[] = [];
  // Each from an address of its own: only the adapter's count can run out.
  for (let i = 0; i < UPLOADS_BURST + 1; i += 1) answers.push(await upload(`127.0.0.${61 + i}`, signed(), NOT_A_STATEMENT));

  expect(answers.slice(0, UPLOADS_BURST).map((a) => a.status)).toEqual(Array(UPLOADS_BURST).fill(422));
  const refused = answers[UPLOADS_BURST]!;
  expect(refused.status).toBe(429);
  expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(refused.body.error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('This adapter sent too many') });
});
