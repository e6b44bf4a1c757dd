import { AppError } from '@pmatch/contracts';
import type { Database, PrismaClient } from '@pmatch/db';
import { MAX_JSON_DEPTH } from '@pmatch/platform';
import { useServiceTestDatabase } from '@pmatch/testkit';
import { holdKey, storeAnswer, type KeyState } from '../src/data/idempotency';
import { RETENTION_BATCH, deleteExpiredRecords } from '../src/data/retention';
import { IDEMPOTENCY_KEY_LIFETIME_MS, requestFingerprint } from '../src/domain/idempotency';

let prisma: PrismaClient;
/** As orders-api connects: in its own least-privilege role. */
let database: Database;
const t0 = new Date('2026-11-22T00:00:00Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

useServiceTestDatabase('orders-api', async (opened) => {
  ({ owner: prisma, database } = opened);
  await prisma.organisation.create({ data: { id: 'org_idem', name: 'n', ownerEmail: 'o@example.com' } });
});

const key = (name: string) => ({ apiKeyId: 'key_idem', organisationId: 'org_idem', mode: 'test' as const, key: name });
const created = { status: 201, body: { id: 'ord_1', metadata: { b: "it's", a: '"ü"' }, closed_at: null } };

/** Holds a key, stores an answer under it and commits. */
async function answered(name: string, fingerprint: string, at: Date): Promise<void> {
  await database.transaction(async (tx) => {
    expect(await holdKey(tx, key(name), fingerprint, at)).toEqual({ state: 'new' });
    await storeAnswer(tx, key(name), fingerprint, created, at);
  });
}

const look = (name: string, fingerprint: string, at: Date): Promise<KeyState> => database.transaction((tx) => holdKey(tx, key(name), fingerprint, at));

describe('idempotency keys', () => {
  test('when a key is held by a transaction still running, then another request with it is told it is in use', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let signalHeld!: () => void;
    const held = new Promise<void>((resolve) => (signalHeld = resolve));
    const first = database.transaction(async (tx) => {
      const state = await holdKey(tx, key('a'), 'hash-1', t0);
      signalHeld();
      await gate;
      return state;
    });
    await held;

    const second = await look('a', 'hash-1', later(1000));

    release();
    expect(await first).toEqual({ state: 'new' });
    expect(second).toEqual({ state: 'in_use' });
  });

  test('when the transaction that held a key rolls back, then nothing of it remains and the retry runs', async () => {
    await expect(
      database.transaction(async (tx) => {
        await holdKey(tx, key('b'), 'hash-1', t0);
        await storeAnswer(tx, key('b'), 'hash-1', created, t0);
        throw new Error('the order could not be stored');
      }),
    ).rejects.toThrow('the order could not be stored');

    expect(await look('b', 'hash-1', later(1))).toEqual({ state: 'new' });
    expect(await prisma.idempotencyKey.count({ where: { key: 'b' } })).toBe(0);
  });

  test('when an answer was stored, then a repeat gets it and another body is refused', async () => {
    await answered('c', 'hash-1', t0);

    expect(await look('c', 'hash-1', later(1000))).toEqual({ state: 'completed', ...created });
    expect(await prisma.idempotencyKey.findUnique({ where: { apiKeyId_key: { apiKeyId: 'key_idem', key: 'c' } } })).toEqual({
      ...key('c'),
      requestHash: 'hash-1',
      responseStatus: 201,
      responseBody: created.body,
      createdAt: t0,
    });
    expect(await look('c', 'hash-2', later(1000))).toEqual({ state: 'reused' });
  });

  test('when 24 hours have passed, then the key is forgotten, may carry a new request, and the new answer replaces the old', async () => {
    await answered('d', 'hash-1', t0);
    expect(await look('d', 'hash-2', later(IDEMPOTENCY_KEY_LIFETIME_MS))).toEqual({ state: 'reused' });

    await answered('d', 'hash-2', later(IDEMPOTENCY_KEY_LIFETIME_MS + 1));

    expect(await look('d', 'hash-2', later(IDEMPOTENCY_KEY_LIFETIME_MS + 2))).toEqual({ state: 'completed', ...created });
    expect(await look('d', 'hash-1', later(IDEMPOTENCY_KEY_LIFETIME_MS + 2))).toEqual({ state: 'reused' });
  });

  test('when keys of other API keys (of the same organisation or another) have the same text, then they are other keys', async () => {
    await prisma.organisation.create({ data: { id: 'org_other', name: 'n', ownerEmail: 'o@example.com' } });
    await answered('e', 'hash-1', t0);

    expect(await database.transaction((tx) => holdKey(tx, { ...key('e'), apiKeyId: 'key_same_org' }, 'hash-1', t0))).toEqual({ state: 'new' });
    expect(await database.transaction((tx) => holdKey(tx, { ...key('e'), apiKeyId: 'key_other', organisationId: 'org_other' }, 'hash-2', t0))).toEqual({
      state: 'new',
    });
    expect(await database.transaction((tx) => holdKey(tx, { ...key('e'), apiKeyId: 'key_live', mode: 'live' }, 'hash-2', t0))).toEqual({ state: 'new' });
  });
});

describe('request fingerprints', () => {
  test('when only the key order differs, then the fingerprint is the same; values, paths and methods count', () => {
    const a = requestFingerprint('POST', '/v1/orders', { amount: 1, payer_name: 'x', metadata: { b: '1', a: '2' } });
    expect(requestFingerprint('POST', '/v1/orders', { metadata: { a: '2', b: '1' }, payer_name: 'x', amount: 1 })).toBe(a);
    expect(requestFingerprint('POST', '/v1/orders', { amount: 2, payer_name: 'x', metadata: { b: '1', a: '2' } })).not.toBe(a);
    expect(requestFingerprint('POST', '/v1/other', { amount: 1, payer_name: 'x', metadata: { b: '1', a: '2' } })).not.toBe(a);
    expect(requestFingerprint('PATCH', '/v1/orders', { amount: 1, payer_name: 'x', metadata: { b: '1', a: '2' } })).not.toBe(a);
  });

  test('when a body nests deeper than the HTTP front allows, then a 400 parameter_invalid, never a stack overflow', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let atLimit: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) atLimit = { a: atLimit };

    expect(() => requestFingerprint('POST', '/v1/orders', atLimit)).not.toThrow();
    expect(() => requestFingerprint('POST', '/v1/orders', deep)).toThrow(AppError);
    expect(() => requestFingerprint('POST', '/v1/orders', deep)).toThrow(expect.objectContaining({ code: 'parameter_invalid', status: 400 }));
  });
});

describe('retention of idempotency keys', () => {
  test('when more keys expired than one batch, then a sweep deletes one batch and the next the rest, and a key still alive stays', async () => {
    await prisma.$executeRaw`
      INSERT INTO idempotency_keys (api_key_id, organisation_id, mode, key, request_hash, response_status, response_body, created_at)
      SELECT 'key_idem', 'org_idem', 'test', 'bulk-' || g, 'hash', 201, '{}'::jsonb, ${t0}
      FROM generate_series(1, ${RETENTION_BATCH + 1}) g`;
    const now = later(IDEMPOTENCY_KEY_LIFETIME_MS + 1);
    await answered('alive', 'hash-alive', later(IDEMPOTENCY_KEY_LIFETIME_MS));
    const expired = () => prisma.idempotencyKey.count({ where: { createdAt: { lt: later(IDEMPOTENCY_KEY_LIFETIME_MS) } } });
    const before = await expired();

    await deleteExpiredRecords(database.prisma, now);
    const afterOne = await expired();
    await deleteExpiredRecords(database.prisma, now);

    expect(before - afterOne).toBe(RETENTION_BATCH);
    expect(await expired()).toBe(0);
    expect(await prisma.idempotencyKey.count({ where: { key: 'alive' } })).toBe(1);
  });
});
