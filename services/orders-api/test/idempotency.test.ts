import { createPrisma, type PrismaClient } from '@pmatch/db';
import { createTestDatabase, type TestDatabase } from '@pmatch/testkit';
import { claimKey, completeKey, releaseKey } from '../src/data/idempotency';
import { IDEMPOTENCY_IN_PROGRESS_LEASE_MS, IDEMPOTENCY_KEY_LIFETIME_MS, requestFingerprint } from '../src/domain/idempotency';

let db: TestDatabase;
let prisma: PrismaClient;
const t0 = new Date('2026-11-22T00:00:00Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url);
  await prisma.organisation.create({ data: { id: 'org_idem', name: 'n', ownerEmail: 'o@example.com' } });
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const key = (name: string) => ({ organisationId: 'org_idem', mode: 'test' as const, key: name });

describe('idempotency keys', () => {
  test('when a key is claimed and claimed again before it completes, then the second is told it is in progress', async () => {
    expect(await claimKey(prisma, key('a'), 'hash-1', t0)).toEqual({ state: 'claimed' });
    expect(await claimKey(prisma, key('a'), 'hash-1', later(1000))).toEqual({ state: 'in_progress' });
  });

  test('when the first request completed, then a repeat gets its answer and another body is refused', async () => {
    await claimKey(prisma, key('b'), 'hash-1', t0);
    await completeKey(prisma, key('b'), 201, { id: 'ord_1' });

    expect(await claimKey(prisma, key('b'), 'hash-1', later(1000))).toEqual({ state: 'completed', status: 201, body: { id: 'ord_1' } });
    expect(await claimKey(prisma, key('b'), 'hash-2', later(1000))).toEqual({ state: 'reused' });
  });

  test('when a request died holding the key past its lease, then the key can be taken over', async () => {
    await claimKey(prisma, key('c'), 'hash-1', t0);
    expect(await claimKey(prisma, key('c'), 'hash-1', later(IDEMPOTENCY_IN_PROGRESS_LEASE_MS - 1))).toEqual({ state: 'in_progress' });
    expect(await claimKey(prisma, key('c'), 'hash-1', later(IDEMPOTENCY_IN_PROGRESS_LEASE_MS + 1))).toEqual({ state: 'claimed' });
  });

  test('when 24 hours have passed, then the key is forgotten and may carry a new request', async () => {
    await claimKey(prisma, key('d'), 'hash-1', t0);
    await completeKey(prisma, key('d'), 201, { id: 'ord_1' });
    expect(await claimKey(prisma, key('d'), 'hash-2', later(IDEMPOTENCY_KEY_LIFETIME_MS - 1))).toEqual({ state: 'reused' });
    expect(await claimKey(prisma, key('d'), 'hash-2', later(IDEMPOTENCY_KEY_LIFETIME_MS + 1))).toEqual({ state: 'claimed' });
  });

  test('when the request failed on our side, then the released key is free for the retry', async () => {
    await claimKey(prisma, key('e'), 'hash-1', t0);
    await releaseKey(prisma, key('e'));
    expect(await claimKey(prisma, key('e'), 'hash-1', later(1))).toEqual({ state: 'claimed' });
  });

  test('request fingerprints ignore key order but not values, paths or methods', () => {
    const a = requestFingerprint('POST', '/v1/orders', { amount: 1, payer_name: 'x', metadata: { b: '1', a: '2' } });
    expect(requestFingerprint('POST', '/v1/orders', { metadata: { a: '2', b: '1' }, payer_name: 'x', amount: 1 })).toBe(a);
    expect(requestFingerprint('POST', '/v1/orders', { amount: 2, payer_name: 'x', metadata: { b: '1', a: '2' } })).not.toBe(a);
    expect(requestFingerprint('POST', '/v1/other', { amount: 1, payer_name: 'x', metadata: { b: '1', a: '2' } })).not.toBe(a);
  });
});
