import type { Database, PrismaClient } from '@pmatch/db';
import { sha256Hex } from '@pmatch/platform';
import { notingQueries, useServiceTestDatabase } from '@pmatch/testkit';
import { findOrderByExternalId, newOrderWriter } from '../src/data/orders';
import { findActiveKeyByHash } from '../src/data/keys';
import { resolveBankAccount, type ApiKeyAuth } from '../src/domain/api-key-auth';

/** The reads and the write of POST /v1/orders (and of every /v1 request's key), on plain SQL in orders-api's own role. */

let owner: PrismaClient;
let database: Database;

useServiceTestDatabase('orders-api', async (opened) => {
  ({ owner, database } = opened);
  await owner.organisation.create({ data: { id: 'org_a', name: 'n', ownerEmail: 'o@example.com' } });
  await owner.organisation.create({ data: { id: 'org_none', name: 'n', ownerEmail: 'o@example.com' } });
  const account = (id: string, mode: string, createdAt: string) =>
    owner.bankAccount.create({
      data: {
        id,
        organisationId: 'org_a',
        mode,
        bankCode: '0001',
        branchCode: '001',
        accountNumber: '1234567',
        holderName: 'h',
        createdAt: new Date(createdAt),
      },
    });
  // Created in another order than their ids sort in: the scope lists oldest first.
  await account('ba_live_2', 'live', '2026-11-22T00:00:00Z');
  await account('ba_live_1', 'live', '2026-11-22T00:00:01Z');
  await account('ba_test', 'test', '2026-11-22T00:00:00Z');
  await owner.apiKey.createMany({
    data: [
      { id: 'key_all', organisationId: 'org_a', mode: 'live', name: 'n', permission: 'read_write', keyHash: sha256Hex('all'), keyHint: 'h' },
      {
        id: 'key_scoped',
        organisationId: 'org_a',
        mode: 'live',
        name: 'n',
        permission: 'read_only',
        keyHash: sha256Hex('scoped'),
        keyHint: 'h',
        bankAccountId: 'ba_live_1',
      },
      { id: 'key_none', organisationId: 'org_none', mode: 'live', name: 'n', permission: 'read_write', keyHash: sha256Hex('none'), keyHint: 'h' },
      { id: 'key_test', organisationId: 'org_a', mode: 'test', name: 'n', permission: 'read_write', keyHash: sha256Hex('test'), keyHint: 'h' },
      {
        id: 'key_revoked',
        organisationId: 'org_a',
        mode: 'test',
        name: 'n',
        permission: 'read_write',
        keyHash: sha256Hex('revoked'),
        keyHint: 'h',
        revokedAt: new Date(),
      },
    ],
  });
});

const auth = (mode: 'test' | 'live', bankAccountId: string | null = null): ApiKeyAuth => ({
  keyId: 'key_x',
  organisationId: 'org_a',
  mode,
  permission: 'read_write',
  bankAccountId,
  accountIds: [],
  keyHash: 'hash_x',
  cached: false,
});

describe('API keys', () => {
  test('when a key is looked up by its hash, then what authentication needs of it comes back, with the accounts in its scope oldest first', async () => {
    expect(await findActiveKeyByHash(database.sql, sha256Hex('all'))).toEqual({
      id: 'key_all',
      organisationId: 'org_a',
      mode: 'live',
      permission: 'read_write',
      bankAccountId: null,
      accountIds: ['ba_live_2', 'ba_live_1'],
      dedicatedAccountIds: [],
    });
    expect(await findActiveKeyByHash(database.sql, sha256Hex('scoped'))).toMatchObject({
      id: 'key_scoped',
      permission: 'read_only',
      bankAccountId: 'ba_live_1',
      accountIds: ['ba_live_1'],
    });
    expect(await findActiveKeyByHash(database.sql, sha256Hex('test'))).toMatchObject({ id: 'key_test', accountIds: ['ba_test'] });
    expect(await findActiveKeyByHash(database.sql, sha256Hex('none'))).toMatchObject({ id: 'key_none', accountIds: [] });
  });

  test('when a key is revoked or unknown, then nothing is found', async () => {
    expect(await findActiveKeyByHash(database.sql, sha256Hex('revoked'))).toBeNull();
    expect(await findActiveKeyByHash(database.sql, sha256Hex('never issued'))).toBeNull();
  });
});

describe('the bank account of a new order', () => {
  const scope = (...accountIds: string[]) => ({ accountIds });

  test('when the key sees one account, then it is the default, and a given one must be in scope', () => {
    expect(resolveBankAccount(scope('ba_test'), undefined)).toBe('ba_test');
    expect(resolveBankAccount(scope('ba_live_1'), 'ba_live_1')).toBe('ba_live_1');
    expect(() => resolveBankAccount(scope('ba_live_1'), 'ba_live_2')).toThrow(expect.objectContaining({ code: 'parameter_invalid' }));
  });

  test('when the key sees several accounts, then one must be named, and any of them may be', () => {
    expect(() => resolveBankAccount(scope('ba_live_2', 'ba_live_1'), undefined)).toThrow(
      expect.objectContaining({ code: 'parameter_missing', message: expect.stringContaining('Several') }),
    );
    expect(resolveBankAccount(scope('ba_live_2', 'ba_live_1'), 'ba_live_2')).toBe('ba_live_2');
  });

  test('when the key sees one plain account and dedicated ones, then the plain one is the default, and a dedicated one is named only for a test deposit', () => {
    const withPool = { accountIds: ['ba_test', 'ba_pool_1', 'ba_pool_2'], dedicatedAccountIds: ['ba_pool_1', 'ba_pool_2'] };

    expect(resolveBankAccount(withPool, undefined)).toBe('ba_test');
    expect(() => resolveBankAccount(withPool, 'ba_pool_1')).toThrow(expect.objectContaining({ code: 'parameter_invalid', param: 'bank_account_id' }));
    expect(resolveBankAccount(withPool, 'ba_pool_1', { dedicatedAllowed: true })).toBe('ba_pool_1');
  });

  test('when the key sees no account, then bank_account_id is missing', () => {
    expect(() => resolveBankAccount(scope(), undefined)).toThrow(
      expect.objectContaining({ code: 'parameter_missing', message: expect.stringContaining('No bank account') }),
    );
    expect(() => resolveBankAccount(scope(), 'ba_test')).toThrow(expect.objectContaining({ code: 'parameter_invalid' }));
  });
});

describe('an order by external_id', () => {
  test('when the organisation and mode have an order with it, then it is read as Prisma reads it; other modes and organisations do not see it', async () => {
    await owner.order.create({
      data: {
        id: 'ord_ext',
        organisationId: 'org_a',
        mode: 'test',
        bankAccountId: 'ba_test',
        status: 'open',
        amount: 500n,
        payerName: 'p',
        externalId: 'ext_1',
        itemName: 'i',
        orderedAt: new Date('2026-11-22T00:00:00Z'),
        expiresAt: new Date('2026-12-06T00:00:00Z'),
        metadata: { k: 'v' },
        paymentToken: 'tok_ext',
      },
    });

    expect(await findOrderByExternalId(database.sql, auth('test'), 'ext_1')).toEqual(await owner.order.findUnique({ where: { id: 'ord_ext' } }));
    expect(await findOrderByExternalId(database.sql, auth('live'), 'ext_1')).toBeNull();
    expect(await findOrderByExternalId(database.sql, { ...auth('test'), organisationId: 'org_other' }, 'ext_1')).toBeNull();
    expect(await findOrderByExternalId(database.sql, auth('test'), 'ext_2')).toBeNull();
  });
});

describe('new orders written together', () => {
  const at = new Date('2026-11-22T00:00:00Z');
  const order = (externalId: string, amount: number) => ({
    order: {
      organisationId: 'org_a',
      mode: 'test' as const,
      bankAccountId: 'ba_test',
      amount,
      payerName: 'ﾔﾏﾀﾞ',
      externalId,
      itemName: 'i',
      orderedAt: at,
      expiresAt: new Date('2026-12-06T00:00:00Z'),
      metadata: {},
      source: null,
    },
    now: at,
  });

  test('when orders are asked for while one is written, then they are written together by the next statement, and a repeated external_id is answered null', async () => {
    const statements: string[] = [];
    const handedOver: string[][] = [];
    const write = newOrderWriter(
      notingQueries(database.sql, statements),
      'https://pay.example.com',
      (messages) => handedOver.push(messages.map((m) => m.messageId)),
      0,
    );

    const rows = await Promise.all([write(order('ext_w1', 1)), write(order('ext_w2', 2)), write(order('ext_w3', 3)), write(order('ext_w2', 4))]);

    // The first at once; the three that came while it was written in one more.
    expect(statements).toEqual(['db.insert_orders_announced_unless_external_id_taken_leased', 'db.insert_orders_announced_unless_external_id_taken_leased']);
    expect(rows.map((row) => row && [row.externalId, row.amount])).toEqual([['ext_w1', 1n], ['ext_w2', 2n], ['ext_w3', 3n], null]);
    const stored = await owner.order.findMany({ where: { externalId: { in: ['ext_w1', 'ext_w2', 'ext_w3'] } }, orderBy: { externalId: 'asc' } });
    expect(stored).toEqual(rows.slice(0, 3));
    // The second and third share their writer's transaction; the first had its own.
    const writers = await owner.$queryRaw<{ external_id: string; tx: string }[]>`
      SELECT external_id, xmin::text AS tx FROM orders WHERE external_id IN ('ext_w1', 'ext_w2', 'ext_w3') ORDER BY external_id`;
    expect(writers[1]!.tx).toBe(writers[2]!.tx);
    expect(writers[0]!.tx).not.toBe(writers[1]!.tx);
    // Each statement's messages (its orders' event.recorded, then their order.registered), handed to
    // the relay once it committed: as stored, and leased for it.
    const outbox = await owner.outbox.findMany({ where: { messageId: { in: handedOver.flat() } } });
    expect(outbox.filter((o) => o.leasedUntil !== null && o.publishedAt === null)).toHaveLength(4);
    const registered = (i: number) => `registered_${rows[i]!.id}`;
    expect(handedOver.map((ids) => ids.filter((id) => id.startsWith('registered_')))).toEqual([[registered(0)], [registered(1)]]);
    expect(handedOver.map((ids) => ids.length)).toEqual([2, 2]);
  });
});
