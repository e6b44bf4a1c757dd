import { EXCHANGES, ROUTING_KEYS, newId } from '@pmatch/contracts';
import { transactionObject, type Database, type PrismaClient, type Sql } from '@pmatch/db';
import type { OutboxPublisher } from '@pmatch/platform';
import { notingQueries, uniqueName, useServiceTestDatabase } from '@pmatch/testkit';
import { TransactionStore, insertNewDeposits } from '../src/data/transactions';
import type { IncomingTransaction } from '../src/domain/transaction';

/** The owner's client, to seed and to look. */
let prisma: PrismaClient;
/** bank-ingest's own database role, as the service connects: what it stores, its role may store. */
let ingest: Database;
const at = new Date('2026-11-22T10:00:00.123Z');

useServiceTestDatabase('bank-ingest', (opened) => {
  ({ owner: prisma, database: ingest } = opened);
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
    ...account,
    mode: 'live',
    bankReference: uniqueName('ref'),
    direction: 'deposit',
    amount: 9_007_199_254,
    counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
    occurredAt: new Date('2026-11-22T09:00:00.456Z'),
    ...fields,
  };
}

/** `ingest`, noting the statements run through it and the transactions it opens. */
function watched() {
  const seen = { statements: [] as string[], transactions: 0 };
  const noting = (sql: Sql): Sql => notingQueries(sql, seen.statements);
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

/** An outbox relay that notes what it is told: the message ids handed over, and the nudges. */
function relay() {
  const told = { handedOver: [] as string[], nudges: 0 };
  const outbox: OutboxPublisher = {
    nudge: () => void (told.nudges += 1),
    publishLeased: (messages) => void told.handedOver.push(...messages.map((m) => m.messageId)),
  };
  return { outbox, told };
}

const depositOutboxRows = (bankAccountId: string) =>
  prisma.outbox.count({ where: { routingKey: ROUTING_KEYS.depositReceived, payload: { path: ['bank_account_id'], equals: bankAccountId } } });

describe('TransactionStore', () => {
  test('when a deposit is new, then the row returned is the row stored, with its deposit.received outbox row', async () => {
    const account = await seedAccount();

    const { outbox: toRelay, told } = relay();

    const stored = await new TransactionStore(ingest, toRelay).store(incoming(account), at);

    expect(stored.duplicate).toBe(false);
    expect(stored.transaction).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: stored.transaction.id } }));
    expect(stored.transaction).toMatchObject({ status: 'pending', amount: 9_007_199_254n, createdAt: at, updatedAt: at, decision: null });
    const outbox = await prisma.outbox.findUniqueOrThrow({ where: { messageId: `deposit_${stored.transaction.id}` } });
    expect(outbox).toMatchObject({
      exchange: EXCHANGES.bank,
      routingKey: ROUTING_KEYS.depositReceived,
      payload: { transaction_id: stored.transaction.id, bank_account_id: account.bankAccountId },
      publishedAt: null,
    });
    // Inserted leased and handed to the relay once stored: published without a claim.
    expect(outbox.leasedUntil!.getTime()).toBeGreaterThan(Date.now());
    expect(told).toEqual({ handedOver: [outbox.messageId], nudges: 0 });
  });

  test('when a deposit is new, then it is stored with exactly one outbox row in one statement, outside any transaction', async () => {
    // A test deposit, the kind that carries a reply address: on the organisation's test account.
    const account = await seedAccount('test');
    const { database, seen } = watched();
    const replyTo = { queue: 'amq.rabbitmq.reply-to.abc', correlation_id: 'corr_1' };

    const stored = await new TransactionStore(database, relay().outbox).store(incoming(account, { mode: 'test', replyTo }), at);

    expect(seen).toEqual({ statements: ['bank_ingest.insert_deposits'], transactions: 0 });
    expect(stored.transaction).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: stored.transaction.id } }));
    expect(await depositOutboxRows(account.bankAccountId)).toBe(1);
    const outbox = await prisma.outbox.findUniqueOrThrow({ where: { messageId: `deposit_${stored.transaction.id}` } });
    expect(outbox.payload).toEqual({ transaction_id: stored.transaction.id, bank_account_id: account.bankAccountId, reply_to: replyTo });
  });

  test('when the same bank reference comes again, then nothing new is stored and the first row is returned', async () => {
    const account = await seedAccount();
    const first = await new TransactionStore(ingest, relay().outbox).store(incoming(account, { bankReference: 'same-ref' }), at);
    const { database, seen } = watched();
    const { outbox: toRelay, told } = relay();

    const again = await new TransactionStore(database, toRelay).store(
      incoming(account, { bankReference: 'same-ref', amount: 1 }),
      new Date(at.getTime() + 1000),
    );

    expect(again).toEqual({ transaction: first.transaction, duplicate: true });
    expect(told).toEqual({ handedOver: [], nudges: 0 });
    expect(seen).toEqual({ statements: ['bank_ingest.insert_deposits', 'bank_ingest.find_transaction_by_reference'], transactions: 0 });
    expect(await prisma.transaction.count({ where: { bankAccountId: account.bankAccountId } })).toBe(1);
    expect(await depositOutboxRows(account.bankAccountId)).toBe(1);
  });

  test.each(['deposit', 'withdrawal'] as const)(
    'when the same bank reference comes three times at once (%s), then one is stored, announced once, and the others are its duplicates',
    async (direction) => {
      const account = await seedAccount();

      const results = await Promise.all(
        [1, 2, 3].map(() => new TransactionStore(ingest, relay().outbox).store(incoming(account, { bankReference: 'racing-ref', direction }), at)),
      );

      expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
      expect(new Set(results.map((r) => r.transaction.id)).size).toBe(1);
      expect(await depositOutboxRows(account.bankAccountId)).toBe(direction === 'deposit' ? 1 : 0);
      expect(await prisma.event.count({ where: { organisationId: account.organisationId } })).toBe(direction === 'deposit' ? 0 : 1);
    },
  );

  test('when a withdrawal is new, then it is stored settled with its transaction.withdrawn event', async () => {
    const account = await seedAccount();

    const { database, seen } = watched();
    const { outbox: toRelay, told } = relay();

    const stored = await new TransactionStore(database, toRelay).store(incoming(account, { direction: 'withdrawal' }), at);

    expect(seen).toEqual({ statements: ['bank_ingest.insert_transaction', 'db.insert_events_and_outbox'], transactions: 1 });
    expect(stored.transaction).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: stored.transaction.id } }));
    expect(stored.transaction.status).toBe('unmatched');
    const events = await prisma.event.findMany({ where: { organisationId: account.organisationId } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'transaction.withdrawn', data: { object: JSON.parse(JSON.stringify(transactionObject(stored.transaction))) } });
    // Written in a transaction: not leased, for the relay to claim when told.
    expect(await prisma.outbox.findMany({ where: { messageId: events[0]!.id }, select: { leasedUntil: true } })).toEqual([{ leasedUntil: null }]);
    expect(told).toEqual({ handedOver: [], nudges: 1 });
    expect(await depositOutboxRows(account.bankAccountId)).toBe(0);
  });

  test('when a withdrawal comes again, then nothing new is stored, no second event is recorded, and the first row is returned', async () => {
    const account = await seedAccount();
    const first = await new TransactionStore(ingest, relay().outbox).store(incoming(account, { direction: 'withdrawal', bankReference: 'same-ref' }), at);

    const { outbox: toRelay, told } = relay();

    const again = await new TransactionStore(ingest, toRelay).store(incoming(account, { direction: 'withdrawal', bankReference: 'same-ref', amount: 1 }), at);

    expect(again).toEqual({ transaction: first.transaction, duplicate: true });
    expect(told).toEqual({ handedOver: [], nudges: 0 });
    expect(await prisma.event.count({ where: { organisationId: account.organisationId } })).toBe(1);
  });
});

describe('deposits stored together', () => {
  test('when deposits arrive while one is stored, then they are stored together by the next statement, each with its own outbox row', async () => {
    const account = await seedAccount();
    const other = await seedAccount();
    const { database, seen } = watched();
    const store = new TransactionStore(database, relay().outbox);
    const sent = [incoming(account), incoming(other), incoming(account, { amount: 1 }), incoming(other, { amount: 2 })];

    const results = await Promise.all(sent.map((t) => store.store(t, at)));

    // The first at once, the three that came while it was stored in one more.
    expect(seen).toEqual({ statements: ['bank_ingest.insert_deposits', 'bank_ingest.insert_deposits'], transactions: 0 });
    expect(results.map((r) => r.duplicate)).toEqual([false, false, false, false]);
    expect(results.map((r) => [r.transaction.bankAccountId, r.transaction.bankReference, r.transaction.amount])).toEqual(
      sent.map((t) => [t.bankAccountId, t.bankReference, BigInt(t.amount)]),
    );
    for (const { transaction } of results) {
      expect(transaction).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: transaction.id } }));
      const outbox = await prisma.outbox.findUniqueOrThrow({ where: { messageId: `deposit_${transaction.id}` } });
      expect(outbox.payload).toEqual({ transaction_id: transaction.id, bank_account_id: transaction.bankAccountId });
    }
    expect([await depositOutboxRows(account.bankAccountId), await depositOutboxRows(other.bankAccountId)]).toEqual([2, 2]);
  });

  test('when one statement holds a new deposit, one stored before and the same reference twice, then each new one is stored and announced once and the others are answered as duplicates', async () => {
    const account = await seedAccount();
    await new TransactionStore(ingest, relay().outbox).store(incoming(account, { bankReference: 'stored-before' }), at);

    const handedOver: string[][] = [];

    const rows = await insertNewDeposits(
      ingest.sql,
      [
        { incoming: incoming(account, { bankReference: 'new' }), at },
        { incoming: incoming(account, { bankReference: 'stored-before', amount: 1 }), at },
        { incoming: incoming(account, { bankReference: 'twice' }), at },
        { incoming: incoming(account, { bankReference: 'twice', amount: 2 }), at },
      ],
      (messages) => handedOver.push(messages.map((m) => m.messageId)),
    );

    expect(rows.map((row) => row?.bankReference ?? null)).toEqual(['new', null, 'twice', null]);
    expect(handedOver).toEqual([[`deposit_${rows[0]!.id}`, `deposit_${rows[2]!.id}`]]);
    expect(await prisma.transaction.count({ where: { bankAccountId: account.bankAccountId } })).toBe(3);
    expect(await depositOutboxRows(account.bankAccountId)).toBe(3);
  });

  test("when the same reference comes twice while another deposit is stored, then the second is answered with the first one's row", async () => {
    const account = await seedAccount();
    const store = new TransactionStore(ingest, relay().outbox);

    const [, first, second] = await Promise.all([
      store.store(incoming(account), at),
      store.store(incoming(account, { bankReference: 'twice' }), at),
      store.store(incoming(account, { bankReference: 'twice', amount: 2 }), at),
    ]);

    expect(first).toMatchObject({ duplicate: false, transaction: { bankReference: 'twice', amount: 9_007_199_254n } });
    expect(second).toEqual({ transaction: first!.transaction, duplicate: true });
  });

  test('when a deposit in a batch cannot be stored, then only its own notification fails and the others are stored', async () => {
    const account = await seedAccount();
    const { database, seen } = watched();
    const store = new TransactionStore(database, relay().outbox);
    const unknownAccount = { organisationId: account.organisationId, bankAccountId: newId('bankAccount') };

    const results = await Promise.allSettled([
      store.store(incoming(account, { bankReference: 'first' }), at),
      store.store(incoming(account, { bankReference: 'second' }), at),
      store.store(incoming(unknownAccount), at),
      store.store(incoming(account, { bankReference: 'third' }), at),
    ]);

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // The batch of three that failed on the foreign key, then each of the three alone.
    expect(seen.statements).toHaveLength(5);
    expect((await prisma.transaction.findMany({ where: { bankAccountId: account.bankAccountId } })).map((t) => t.bankReference).sort()).toEqual([
      'first',
      'second',
      'third',
    ]);
    expect(await depositOutboxRows(account.bankAccountId)).toBe(3);
    expect(await depositOutboxRows(unknownAccount.bankAccountId)).toBe(0);
  });
});
