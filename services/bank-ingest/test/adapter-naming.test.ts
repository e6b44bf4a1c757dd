import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '@pmatch/contracts';
import { createDatabase, type Database, type PrismaClient } from '@pmatch/db';
import { ManualClock, SecretBox, closeServer, createHttpApp, createLogger, finishHttpApp, listen, newSigningSecret } from '@pmatch/platform';
import { adapterHeaders, camtFile, createTestDatabase, waitFor, zenginFile, type AdapterCredentials, type TestDatabase } from '@pmatch/testkit';
import { Registry } from 'prom-client';
import { AdapterCache, listActiveAdapters } from '../src/data/adapters';
import { ingestRoutes } from '../src/http/routes';
import { SpoolSlots } from '../src/http/statement-upload';

/**
 * Who may make bank-ingest work: a request names its adapter in `bank-adapter-id` and is refused
 * before its body is read when that names no active adapter; only that adapter's secret is tried.
 */

let db: TestDatabase;
let database: Database;
let prisma: PrismaClient;
let server: Server;
let base: string;
let spool: string;
const secretBox = new SecretBox('test-secrets-key-0123456789');
const MiB = 1024 * 1024;

beforeAll(async () => {
  db = await createTestDatabase();
  database = createDatabase(db.url);
  prisma = database.prisma;
  spool = mkdtempSync(join(tmpdir(), 'ingest-naming-'));
  const adapters = new AdapterCache(
    () => listActiveAdapters(prisma),
    (sealed, id) => secretBox.open(sealed, { kind: 'bank_adapter', id }),
    { ttlMs: 0, missRefreshMs: 0, now: () => Date.now() },
  );
  const logger = createLogger('bank-ingest-test', 'silent');
  const app = createHttpApp({ logger, metrics: new Registry(), bodies: 'where mounted' });
  app.use(
    ingestRoutes({
      database,
      clock: new ManualClock(),
      adapters,
      outbox: { nudge: () => undefined, publishLeased: () => undefined },
      statementMaxBytes: 64 * MiB,
      spoolDirectory: spool,
      spoolSlots: new SpoolSlots(1),
    }),
  );
  finishHttpApp(app, logger);
  server = await listen(app, 0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeServer(server);
  await prisma?.$disconnect();
  await db?.drop();
  rmSync(spool, { recursive: true, force: true });
});

async function createAdapter(bankAccountId?: string): Promise<AdapterCredentials> {
  const secret = newSigningSecret();
  const id = newId('adapter');
  await prisma.bankAdapter.create({ data: { id, name: 'bank', secretEncrypted: secretBox.seal(secret, { kind: 'bank_adapter', id }) } });
  if (bankAccountId !== undefined) await prisma.bankAdapterAccount.create({ data: { adapterId: id, bankAccountId } });
  return { id, secret };
}

async function liveAccount(accountNumber: string): Promise<string> {
  const organisationId = newId('organisation');
  await prisma.organisation.create({ data: { id: organisationId, name: '商店', ownerEmail: 'o@example.com' } });
  const id = newId('bankAccount');
  await prisma.bankAccount.create({
    data: { id, organisationId, mode: 'live', bankCode: '0001', branchCode: '001', accountType: 'ordinary', accountNumber, holderName: 'ｼｮｳﾃﾝ' },
  });
  return id;
}

const notification = (bankAccountId: string, reference: string, counterparty = 'ﾔﾏﾀﾞ ﾀﾛｳ') =>
  JSON.stringify({
    bank_account_id: bankAccountId,
    bank_reference: reference,
    direction: 'deposit',
    amount: 1200,
    counterparty,
    occurred_at: '2026-11-20T10:00:00+09:00',
  });

async function post(path: string, headers: Record<string, string>, body: string | Uint8Array) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as { error?: { code: string; type: string } } };
}

const stored = async (bankAccountId: string) => prisma.transaction.count({ where: { bankAccountId } });

describe('bank-adapter-id', () => {
  test('when a request names an unknown adapter id, or none, or a malformed one, then both routes answer 401 invalid_api_key and store nothing', async () => {
    const account = await liveAccount('1000001');
    const real = await createAdapter(account);
    const body = notification(account, 'unknown-1');
    const unknown: Record<string, string> = { ...adapterHeaders({ id: newId('adapter'), secret: real.secret }, body), 'content-type': 'application/json' };
    const { 'bank-adapter-id': _named, ...unnamed } = unknown;
    const malformed = { ...unknown, 'bank-adapter-id': 'not-an-adapter' };

    const answers = [
      await post('/ingest/v1/notifications', unknown, body),
      await post('/ingest/v1/notifications', unnamed, body),
      await post('/ingest/v1/notifications', malformed, body),
      await post('/ingest/v1/statements', { ...unknown, 'content-type': 'application/octet-stream' }, body),
      await post('/ingest/v1/statements', { ...unnamed, 'content-type': 'application/octet-stream' }, body),
    ];

    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
    for (const answer of answers) expect(answer.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect(await stored(account)).toBe(0);
  });

  test('when a revoked adapter names itself and signs correctly, then both routes answer 401 and store nothing', async () => {
    const account = await liveAccount('1000002');
    const adapter = await createAdapter(account);
    await prisma.bankAdapter.update({ where: { id: adapter.id }, data: { revokedAt: new Date() } });
    const body = notification(account, 'revoked-1');
    const file = zenginFile({ kind: '03', accounts: [{ accountNumber: '1000002', records: [{ date: '2026-11-20', amount: 100, name: 'ｱ', reference: 1 }] }] });

    const pushed = await post('/ingest/v1/notifications', { ...adapterHeaders(adapter, body), 'content-type': 'application/json' }, body);
    const uploaded = await post('/ingest/v1/statements', { ...adapterHeaders(adapter, file), 'content-type': 'application/octet-stream' }, file);

    expect([pushed.status, uploaded.status]).toEqual([401, 401]);
    expect(await stored(account)).toBe(0);
  });

  test("when a request names adapter A but carries a valid signature by adapter B's secret, then 401, though B could write to the account", async () => {
    const account = await liveAccount('1000003');
    const a = await createAdapter();
    const b = await createAdapter(account);
    const body = notification(account, 'other-1');
    const file = zenginFile({ kind: '03', accounts: [{ accountNumber: '1000003', records: [{ date: '2026-11-20', amount: 100, name: 'ｱ', reference: 1 }] }] });
    const asA = (signed: Record<string, string>) => ({ ...signed, 'bank-adapter-id': a.id });

    const pushed = await post('/ingest/v1/notifications', { ...asA(adapterHeaders(b, body)), 'content-type': 'application/json' }, body);
    const uploaded = await post('/ingest/v1/statements', { ...asA(adapterHeaders(b, file)), 'content-type': 'application/octet-stream' }, file);
    const byB = await post('/ingest/v1/notifications', { ...adapterHeaders(b, body), 'content-type': 'application/json' }, body);

    expect([pushed.status, uploaded.status]).toEqual([401, 401]);
    expect(byB.status).toBe(202);
    expect(await stored(account)).toBe(1);
  });

  test('when an unauthenticated 32 MiB statement is uploaded, then 401 arrives while the client is still writing, and nothing is spooled', async () => {
    const size = 32 * MiB;
    const unknown = adapterHeaders({ id: newId('adapter'), secret: newSigningSecret() }, 'ignored');
    const answer = await uploadSlowly('/ingest/v1/statements', { ...unknown, 'content-type': 'application/octet-stream' }, size);

    expect(answer.head).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.head).toMatch(/\r\nconnection: close\r\n/i);
    // Socket buffers hold a few MiB at most: a server reading the body would have let the client write it all first.
    expect(answer.writtenWhenAnswered).toBeLessThan(size / 2);
    expect(readdirSync(spool)).toEqual([]);
  });

  test('when an unauthenticated 32 MiB notification is pushed, then 401 arrives while the client is still writing', async () => {
    const size = 32 * MiB;
    const unnamed = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' };
    const answer = await uploadSlowly('/ingest/v1/notifications', { ...unnamed, 'content-type': 'application/json' }, size);

    expect(answer.head).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.writtenWhenAnswered).toBeLessThan(size / 2);
  });
});

describe('names from banks', () => {
  test('when a notification and a camt statement carry a counterparty with bidirectional overrides, isolates and marks, then it is stored without them', async () => {
    const account = await liveAccount('1000010');
    const adapter = await createAdapter(account);
    const hostile = '\u202eﾔﾏﾀﾞ\u2066 ﾀﾛｳ\u2069\u200f\u061c';
    const body = notification(account, 'names-1', hostile);
    const xml = camtFile({
      kind: '054',
      version: '08',
      accounts: [
        {
          bankCode: '0001',
          branchCode: '001',
          accountNumber: '1000010',
          entries: [{ amount: 3400, date: '2026-11-20', name: `\u202bｽｽﾞｷ\u202c ﾊﾅｺ\u200e`, reference: 'names-2' }],
        },
      ],
    });

    const pushed = await post('/ingest/v1/notifications', { ...adapterHeaders(adapter, body), 'content-type': 'application/json' }, body);
    const imported = await post('/ingest/v1/statements', { ...adapterHeaders(adapter, xml), 'content-type': 'application/xml' }, xml);

    expect([pushed.status, imported.status]).toEqual([202, 200]);
    const names = await prisma.transaction.findMany({ where: { bankAccountId: account }, select: { counterparty: true }, orderBy: { amount: 'asc' } });
    expect(names.map((n) => n.counterparty)).toEqual(['ﾔﾏﾀﾞ ﾀﾛｳ', 'ｽｽﾞｷ ﾊﾅｺ']);
  });
});

describe('spooling', () => {
  test('when the spool holds one upload at most and one is being spooled, then another is answered 503 with Retry-After before its body is read, and taken once the first is done', async () => {
    const account = await liveAccount('1000020');
    const adapter = await createAdapter(account);
    const statement = (reference: string) =>
      Buffer.from(
        camtFile({
          kind: '054',
          version: '08',
          accounts: [{ bankCode: '0001', branchCode: '001', accountNumber: '1000020', entries: [{ amount: 5600, date: '2026-11-20', name: 'ｱ', reference }] }],
        }),
      );
    const send = (file: Buffer) => post('/ingest/v1/statements', { ...adapterHeaders(adapter, file), 'content-type': 'application/xml' }, file);
    const held = statement('spool-1');
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    const answered = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (data: Buffer) => {
        text += data.toString('utf8');
        if (text.includes('\r\n\r\n')) resolve(text);
      });
    });
    const head = Object.entries({
      host: `127.0.0.1:${port}`,
      'content-length': String(held.length),
      'content-type': 'application/xml',
      ...adapterHeaders(adapter, held),
    })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST /ingest/v1/statements HTTP/1.1\r\n${head}\r\n`);
    socket.write(held.subarray(0, 100));
    await waitFor(() => (readdirSync(spool).length === 1 ? true : undefined), { what: 'the first upload in the spool' });

    const refused = await send(statement('spool-2'));

    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'service_unavailable' });
    expect(refused.headers.get('retry-after')).toBe('5');
    socket.write(held.subarray(100));
    expect(await answered).toMatch(/^HTTP\/1\.1 200 /);
    socket.destroy();
    const after = await send(statement('spool-2'));
    expect(after.status).toBe(200);
    expect(await stored(account)).toBe(2);
    expect(readdirSync(spool)).toEqual([]);
  });
});

/**
 * Sends a POST of `size` bytes over a raw socket, 64 KiB at a time and only as fast as the server
 * takes them, and resolves with the answer's head and how many body bytes had been written when
 * its first byte arrived.
 */
function uploadSlowly(path: string, headers: Record<string, string>, size: number): Promise<{ head: string; writtenWhenAnswered: number }> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let written = 0;
    let writtenWhenAnswered: number | undefined;
    let answer = '';
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const pump = () => {
      while (writtenWhenAnswered === undefined && written < size && !socket.destroyed) {
        written += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    socket.on('connect', () => {
      const head = Object.entries({ host: `127.0.0.1:${port}`, 'content-length': String(size), ...headers })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
      pump();
    });
    socket.on('data', (data: Buffer) => {
      writtenWhenAnswered ??= written;
      answer += data.toString('latin1');
    });
    const done = () => {
      if (writtenWhenAnswered === undefined) return reject(new Error(`no answer after ${written} bytes`));
      resolve({ head: answer.split('\r\n\r\n')[0]! + '\r\n', writtenWhenAnswered });
    };
    socket.on('close', done);
    // A reset after the answer (the server closed while bytes were still coming) ends the exchange too.
    socket.on('error', () => socket.destroy());
  });
}
