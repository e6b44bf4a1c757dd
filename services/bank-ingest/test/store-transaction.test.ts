import { EXCHANGES, ROUTING_KEYS, newId } from '@pmatch/contracts';
import { createDatabase, createPrisma, transactionView, type Database, type PrismaClient, type Sql } from '@pmatch/db';
import { DATABASE_ROLE, createTestDatabase, databaseUrlAs, uniqueName, type TestDatabase } from '@pmatch/testkit';
import { BankAccountCache, storeTransaction } from '../src/data/transactions';
import type { IncomingTransaction } from '../src/domain/transaction';

let db: TestDatabase;
/** The owner's client, to seed and to look. */
let prisma: PrismaClient;
/** bank-ingest's own database role, as the service connects: what it stores, its role may store. */
let ingest: Database;
const at = new Date('2026-11-22T10:00:00.123Z');

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url);
  ingest = createDatabase(databaseUrlAs(db.url, DATABASE_ROLE['bank-ingest']));
});

afterAll(async () => {
  await prisma?.$disconnect();
  await ingest?.prisma.$disconnect();
  await db?.drop();
});

async function seedAccount(mode: 'live' | 'test' = 'live') {
  const organisationId = newId('organisation');
  const bankAccountId = newId('bankAccount');
  await prisma.organisation.create({ data: { id: organisationId, name: 'Shop', ownerEmail: 'o@example.com' } });
  await prisma.bankAccount.create({
    data: { id: bankAccountId, organisationId, mode, bankCode: '9999', branchCode: '001', accountNumber: '1234567', holderName: 'ｼﾖﾂﾌﾟ' },
  });
  return { organisationId, bankAccountId };
}

function incoming(account: { organisationId: string; bankAccountId: string }, fields: Partial<IncomingTransaction> = {}): IncomingTransaction {
  return {
    ...account, mode: 'live', bankReference: uniqueName('ref'), direction: 'deposit', amount: 9_007_199_254,
    counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', occurredAt: new Date('2026-11-22T09:00:00.456Z'), ...fields,
  };
}

/** `ingest`, noting the statements run through it and the transactions it opens. */
function watched() {
  const seen = { statements: [] as string[], transactions: 0 };
  const noting = (sql: Sql): Sql => ({
    rows(s, values) {
      seen.statements.push(s.name);
      return sql.rows(s, values);
    },
    count(s, values) {
      seen.statements.push(s.name);
      return sql.count(s, values);
    },
  });
  const database: Database = {
    prisma: ingest.prisma,
    sql: noting(ingest.sql),
    transaction(work) {
      seen.transactions += 1;
      return ingest.transaction((tx) => work(noting(tx)));
    },
  };
  return { database, seen };
}

const depositOutboxRows = (bankAccountId: string) =>
  prisma.outbox.count({ where: { routingKey: ROUTING_KEYS.depositReceived, payload: { path: ['bank_account_id'], equals: bankAccountId } } });

describe('storeTransaction', () => {
  test('when a deposit is new, then the row returned is the row stored, with its deposit.received outbox row', async () => {
    const account = await seedAccount();

    const stored = await storeTransaction(ingest, incoming(account), at);

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

  test('when a deposit is new, then it is stored with exactly one outbox row in one statement, outside any transaction', async () => {
    // A test deposit, the kind that carries a reply address: on the organisation's test account.
    const account = await seedAccount('test');
    const { database, seen } = watched();
    const replyTo = { queue: 'amq.rabbitmq.reply-to.abc', correlation_id: 'corr_1' };

    const stored = await storeTransaction(database, incoming(account, { mode: 'test', replyTo }), at);

    expect(seen).toEqual({ statements: ['bank_ingest.insert_deposit'], transactions: 0 });
    expect(stored.transaction).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: stored.transaction.id } }));
    expect(await depositOutboxRows(account.bankAccountId)).toBe(1);
    const outbox = await prisma.outbox.findUniqueOrThrow({ where: { messageId: `deposit_${stored.transaction.id}` } });
    expect(outbox.payload).toEqual({ transaction_id: stored.transaction.id, bank_account_id: account.bankAccountId, reply_to: replyTo });
  });

  test('when the same bank reference comes again, then nothing new is stored and the first row is returned', async () => {
    const account = await seedAccount();
    const first = await storeTransaction(ingest, incoming(account, { bankReference: 'same-ref' }), at);
    const { database, seen } = watched();

    const again = await storeTransaction(database, incoming(account, { bankReference: 'same-ref', amount: 1 }), new Date(at.getTime() + 1000));

    expect(again).toEqual({ transaction: first.transaction, duplicate: true });
    expect(seen).toEqual({ statements: ['bank_ingest.insert_deposit', 'bank_ingest.find_transaction_by_reference'], transactions: 0 });
    expect(await prisma.transaction.count({ where: { bankAccountId: account.bankAccountId } })).toBe(1);
    expect(await depositOutboxRows(account.bankAccountId)).toBe(1);
  });

  test.each(['deposit', 'withdrawal'] as const)(
    'when the same bank reference comes three times at once (%s), then one is stored, announced once, and the others are its duplicates',
    async (direction) => {
      const account = await seedAccount();

      const results = await Promise.all([1, 2, 3].map(() => storeTransaction(ingest, incoming(account, { bankReference: 'racing-ref', direction }), at)));

      expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
      expect(new Set(results.map((r) => r.transaction.id)).size).toBe(1);
      expect(await depositOutboxRows(account.bankAccountId)).toBe(direction === 'deposit' ? 1 : 0);
      expect(await prisma.event.count({ where: { organisationId: account.organisationId } })).toBe(direction === 'deposit' ? 0 : 1);
    },
  );

  test('when a withdrawal is new, then it is stored settled with its transaction.withdrawn event', async () => {
    const account = await seedAccount();

    const { database, seen } = watched();

    const stored = await storeTransaction(database, incoming(account, { direction: 'withdrawal' }), at);

    expect(seen).toEqual({ statements: ['bank_ingest.insert_transaction', 'db.insert_events_and_outbox'], transactions: 1 });
    expect(stored.transaction).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: stored.transaction.id } }));
    expect(stored.transaction.status).toBe('unmatched');
    const events = await prisma.event.findMany({ where: { organisationId: account.organisationId } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'transaction.withdrawn', data: { object: JSON.parse(JSON.stringify(transactionView(stored.transaction))) } });
    expect(await prisma.outbox.count({ where: { messageId: events[0]!.id } })).toBe(1);
    expect(await depositOutboxRows(account.bankAccountId)).toBe(0);
  });

  test('when a withdrawal comes again, then nothing new is stored, no second event is recorded, and the first row is returned', async () => {
    const account = await seedAccount();
    const first = await storeTransaction(ingest, incoming(account, { direction: 'withdrawal', bankReference: 'same-ref' }), at);

    const again = await storeTransaction(ingest, incoming(account, { direction: 'withdrawal', bankReference: 'same-ref', amount: 1 }), at);

    expect(again).toEqual({ transaction: first.transaction, duplicate: true });
    expect(await prisma.event.count({ where: { organisationId: account.organisationId } })).toBe(1);
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
