import { EXCHANGES, ROUTING_KEYS, newId } from '@pmatch/contracts';
import { createPrisma, transactionView, type PrismaClient } from '@pmatch/db';
import { createTestDatabase, uniqueName, type TestDatabase } from '@pmatch/testkit';
import { BankAccountCache, storeTransaction } from '../src/data/transactions';
import type { IncomingTransaction } from '../src/domain/transaction';

let db: TestDatabase;
let prisma: PrismaClient;
const at = new Date('2026-11-22T10:00:00.123Z');

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url);
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

async function seedAccount() {
  const organisationId = newId('organisation');
  const bankAccountId = newId('bankAccount');
  await prisma.organisation.create({ data: { id: organisationId, name: 'Shop', ownerEmail: 'o@example.com' } });
  await prisma.bankAccount.create({
    data: { id: bankAccountId, organisationId, mode: 'live', bankCode: '9999', branchCode: '001', accountNumber: '1234567', holderName: 'ｼﾖﾂﾌﾟ' },
  });
  return { organisationId, bankAccountId };
}

function incoming(account: { organisationId: string; bankAccountId: string }, fields: Partial<IncomingTransaction> = {}): IncomingTransaction {
  return {
    ...account, mode: 'live', bankReference: uniqueName('ref'), direction: 'deposit', amount: 9_007_199_254,
    counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', occurredAt: new Date('2026-11-22T09:00:00.456Z'), ...fields,
  };
}

describe('storeTransaction', () => {
  test('when a deposit is new, then the row returned is the row stored, with its deposit.received outbox row', async () => {
    const account = await seedAccount();

    const stored = await storeTransaction(prisma, incoming(account), at);

    expect(stored.duplicate).toBe(false);
    expect(stored.transaction).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: stored.transaction.id } }));
    expect(stored.transaction).toMatchObject({ status: 'pending', amount: 9_007_199_254n, createdAt: at, updatedAt: at, decision: null });
    const outbox = await prisma.outbox.findUniqueOrThrow({ where: { messageId: `deposit_${stored.transaction.id}` } });
    expect(outbox).toMatchObject({
      exchange: EXCHANGES.bank,
      routingKey: ROUTING_KEYS.depositReceived,
      payload: { transaction_id: stored.transaction.id, bank_account_id: account.bankAccountId },
    });
  });

  test('when the same bank reference comes again, then nothing new is stored and the first row is returned', async () => {
    const account = await seedAccount();
    const first = await storeTransaction(prisma, incoming(account, { bankReference: 'same-ref' }), at);

    const again = await storeTransaction(prisma, incoming(account, { bankReference: 'same-ref', amount: 1 }), new Date(at.getTime() + 1000));

    expect(again).toEqual({ transaction: first.transaction, duplicate: true });
    expect(await prisma.transaction.count({ where: { bankAccountId: account.bankAccountId } })).toBe(1);
    expect(await prisma.outbox.count({ where: { messageId: { startsWith: 'deposit_' }, payload: { path: ['bank_account_id'], equals: account.bankAccountId } } })).toBe(1);
  });

  test('when the same bank reference comes twice at once, then one is stored and the other is its duplicate', async () => {
    const account = await seedAccount();

    const results = await Promise.all([1, 2, 3].map(() => storeTransaction(prisma, incoming(account, { bankReference: 'racing-ref' }), at)));

    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.transaction.id)).size).toBe(1);
  });

  test('when a withdrawal is new, then it is stored settled with its transaction.withdrawn event', async () => {
    const account = await seedAccount();

    const stored = await storeTransaction(prisma, incoming(account, { direction: 'withdrawal' }), at);

    expect(stored.transaction.status).toBe('unmatched');
    const events = await prisma.event.findMany({ where: { organisationId: account.organisationId } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'transaction.withdrawn', data: { object: JSON.parse(JSON.stringify(transactionView(stored.transaction))) } });
    expect(await prisma.outbox.count({ where: { messageId: events[0]!.id } })).toBe(1);
  });
});

describe('BankAccountCache', () => {
  test('when an account was read less than the TTL ago, then it is not read again; after the TTL it is', async () => {
    const account = await seedAccount();
    let now = 1_000;
    const cache = new BankAccountCache(prisma, 100, () => now);
    const first = await cache.find(account.bankAccountId);
    // A change made by hand in SQL, which only the TTL bounds.
    await prisma.bankAccount.update({ where: { id: account.bankAccountId }, data: { holderName: 'ﾍﾝｺｳ' } });

    now += 99;
    expect(await cache.find(account.bankAccountId)).toBe(first);
    now += 1;
    expect((await cache.find(account.bankAccountId))?.holderName).toBe('ﾍﾝｺｳ');
  });

  test('when an account is unknown, then that is not remembered: an account added a moment later is found at once', async () => {
    const cache = new BankAccountCache(prisma, 60_000, () => 0);
    const id = newId('bankAccount');

    expect(await cache.find(id)).toBeNull();
    const organisationId = newId('organisation');
    await prisma.organisation.create({ data: { id: organisationId, name: 'Shop', ownerEmail: 'o@example.com' } });
    await prisma.bankAccount.create({
      data: { id, organisationId, mode: 'live', bankCode: '9999', branchCode: '001', accountNumber: '7654321', holderName: 'ｼﾖﾂﾌﾟ' },
    });
    expect((await cache.find(id))?.organisationId).toBe(organisationId);
  });
});
