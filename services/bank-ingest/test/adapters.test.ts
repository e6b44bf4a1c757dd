import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newId } from '@pmatch/contracts';
import { createDatabase, type Database, type PrismaClient } from '@pmatch/db';
import { ManualClock, SecretBox, closeServer, createHttpApp, createLogger, finishHttpApp, listen, newSigningSecret } from '@pmatch/platform';
import { adapterHeaders, createTestDatabase, type AdapterCredentials, type TestDatabase } from '@pmatch/testkit';
import { Registry } from 'prom-client';
import { AdapterCache, listActiveAdapters } from '../src/data/adapters';
import { notificationsRouter } from '../src/http/notifications';

let db: TestDatabase;
let database: Database;
let prisma: PrismaClient;
const secretBox = new SecretBox('test-secrets-key-0123456789');

beforeAll(async () => {
  db = await createTestDatabase();
  database = createDatabase(db.url);
  prisma = database.prisma;
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

beforeEach(async () => {
  await prisma.bankAdapterAccount.deleteMany();
  await prisma.bankAdapter.deleteMany();
});

async function createAdapter(): Promise<{ id: string; secret: string }> {
  const secret = newSigningSecret();
  const id = newId('adapter');
  await prisma.bankAdapter.create({ data: { id, name: 'bank', secretEncrypted: secretBox.seal(secret, { kind: 'bank_adapter', id }) } });
  return { id, secret };
}

/** A cache over the real table that counts how often it reads the table and opens a secret. */
function countingCache(now: () => number, options = { ttlMs: 30_000, missRefreshMs: 1_000 }) {
  const counts = { reads: 0, opens: 0 };
  const unopenable: string[] = [];
  const cache = new AdapterCache(
    async () => {
      counts.reads += 1;
      return listActiveAdapters(prisma);
    },
    (sealed, id) => {
      counts.opens += 1;
      return secretBox.open(sealed, { kind: 'bank_adapter', id });
    },
    { ...options, now, onUnopenable: (id) => unopenable.push(id) },
  );
  return { cache, counts, unopenable };
}

describe('AdapterCache', () => {
  test('when many notifications miss within the miss interval, then the secrets are read once more at most, and none is opened again', async () => {
    await createAdapter();
    await createAdapter();
    let now = 0;
    const { cache, counts } = countingCache(() => now);
    await cache.current();
    expect(counts).toEqual({ reads: 1, opens: 2 });

    now = 1_000;
    const rereads = await Promise.all(Array.from({ length: 50 }, async () => [await cache.current(), await cache.afterMiss()]));

    // One re-read shared by the concurrent misses; the secrets it found were opened already.
    expect(counts).toEqual({ reads: 2, opens: 2 });
    expect(rereads.every(([current]) => current!.length === 2)).toBe(true);
    now = 1_999;
    expect(await cache.afterMiss()).toBeUndefined();
    expect(counts.reads).toBe(2);
  });

  test('when an adapter is created after the secrets were read, then its notification is verified once the miss interval has passed, long before the TTL', async () => {
    await createAdapter();
    let now = 0;
    const { cache, counts } = countingCache(() => now);
    await cache.current();
    const fresh = await createAdapter();

    now = 500;
    expect(await cache.afterMiss()).toBeUndefined();
    now = 1_000;
    const reread = await cache.afterMiss();

    expect(reread?.find((a) => a.id === fresh.id)?.secret).toBe(fresh.secret);
    expect(counts).toEqual({ reads: 2, opens: 2 });
  });

  test('when an adapter is revoked, then its secret is no longer used once the TTL has passed', async () => {
    const revoked = await createAdapter();
    let now = 0;
    const { cache } = countingCache(() => now, { ttlMs: 1_000, missRefreshMs: 1_000 });
    expect((await cache.current()).map((a) => a.id)).toEqual([revoked.id]);
    await prisma.bankAdapter.update({ where: { id: revoked.id }, data: { revokedAt: new Date() } });

    now = 1_000;
    expect((await cache.current()).map((a) => a.id)).toEqual([revoked.id]);
    now = 1_001;
    expect(await cache.current()).toEqual([]);
  });

  test('when one sealed secret does not open, then only that adapter is left out, reported once and not tried again', async () => {
    const good = await createAdapter();
    const broken = newId('adapter');
    await prisma.bankAdapter.create({ data: { id: broken, name: 'broken', secretEncrypted: 'v1.not-a-sealed-secret' } });
    let now = 0;
    const { cache, counts, unopenable } = countingCache(() => now, { ttlMs: 1_000, missRefreshMs: 1_000 });

    const first = await cache.current();
    now = 5_000;
    const second = await cache.current();

    expect(first.map((a) => a.id)).toEqual([good.id]);
    expect(second.map((a) => a.id)).toEqual([good.id]);
    expect(unopenable).toEqual([broken]);
    expect(counts).toEqual({ reads: 2, opens: 2 });
  });

  test('when accounts are bound to an adapter, then the cache carries them with their organisation, mode and identity', async () => {
    const adapter = await createAdapter();
    const organisationId = newId('organisation');
    await prisma.organisation.create({ data: { id: organisationId, name: 'Shop', ownerEmail: 'o@example.com' } });
    const account = await prisma.bankAccount.create({
      data: {
        id: newId('bankAccount'),
        organisationId,
        mode: 'live',
        bankCode: '0001',
        branchCode: '002',
        accountType: 'current',
        accountNumber: '7654321',
        holderName: 'ｼﾖﾂﾌﾟ',
      },
    });
    await prisma.bankAdapterAccount.create({ data: { adapterId: adapter.id, bankAccountId: account.id } });
    const { cache } = countingCache(() => 0);

    const [cached] = await cache.current();

    expect(cached?.accounts).toEqual([
      { id: account.id, organisationId, mode: 'live', bankCode: '0001', branchCode: '002', accountType: 'current', accountNumber: '7654321' },
    ]);
  });
});

describe('POST /ingest/v1/notifications', () => {
  let server: Server;
  let url: string;
  let counts: { reads: number; opens: number };
  let now = 0;
  // What is stored here is looked at in the database; nothing is published.
  const notPublished = { nudge: () => undefined, publishLeased: () => undefined };

  beforeEach(async () => {
    const counted = countingCache(() => now);
    counts = counted.counts;
    const logger = createLogger('bank-ingest-test', 'silent');
    const app = createHttpApp({ logger, metrics: new Registry(), bodies: 'where mounted' });
    app.use(notificationsRouter({ database, clock: new ManualClock(), adapters: counted.cache, outbox: notPublished }));
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest/v1/notifications`;
  });

  afterEach(async () => {
    await closeServer(server);
  });

  const send = (adapter: AdapterCredentials) => {
    const body = '{}';
    return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...adapterHeaders(adapter, body) }, body });
  };

  test('when a burst of badly signed notifications arrives, then each is refused with 401 and the secrets are read and opened once', async () => {
    const named = await createAdapter();
    await createAdapter();
    now = 10_000;

    const statuses = await Promise.all(Array.from({ length: 40 }, async () => (await send({ id: named.id, secret: newSigningSecret() })).status));

    expect(statuses).toEqual(Array(40).fill(401));
    expect(counts).toEqual({ reads: 1, opens: 2 });
  });

  test('when an adapter created after the last read names itself past the miss interval, then it is found and its signature accepted', async () => {
    const first = await createAdapter();
    now = 20_000;
    expect((await send({ id: first.id, secret: newSigningSecret() })).status).toBe(401);
    const fresh = await createAdapter();
    now += 1_000;

    // Past authentication, the empty body is what is refused.
    const res = await send(fresh);

    expect(res.status).toBe(400);
    expect(counts.reads).toBe(2);
  });
});
