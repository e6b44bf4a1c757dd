import { LIMITS, newId } from '@pmatch/contracts';
import { createDatabase, isUniqueViolation, type Database, type PrismaClient, type SqlOrPrisma } from '@pmatch/db';
import { ManualClock, RedisLock, createLogger } from '@pmatch/platform';
import { PLAN_CACHE_MODES, REDIS_URL, createTestDatabase, planNodes, preparedPlan, uniqueName, type TestDatabase } from '@pmatch/testkit';
import { Redis } from 'ioredis';
import {
  EXPIRED_CANDIDATE_LIMIT,
  OPEN_CANDIDATE_CAP,
  StaleDecisionError,
  amountCandidates,
  applyDecision,
  claimAndLockPending,
  confirmDeposit,
  findAmountCandidates,
  lockPendingDeposit,
  payOrder,
  setDepositStatus,
} from '../src/data/decisions';
import { decide } from '../src/domain/decide';
import { depositFacts } from '../src/domain/deposit';
import { AUTOMATIC, depositPayment, outsidePayment } from '../src/domain/payments';
import { DEPOSITS_CONSUMER, decideDeposit } from '../src/use-cases/decide-deposit';
import type { MatcherDeps } from '../src/use-cases/deps';

let db: TestDatabase;
let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let deps: MatcherDeps;
const now = new Date('2026-11-22T10:00:00.123Z');
const DEPOSIT_AT = new Date('2026-11-22T09:00:00.456Z');

beforeAll(async () => {
  db = await createTestDatabase();
  database = createDatabase(db.url);
  prisma = database.prisma;
  redis = new Redis(REDIS_URL);
  deps = {
    database, prisma, lock: new RedisLock(redis, uniqueName('pmatch-test:')), clock: new ManualClock(now), logger: createLogger('test', 'silent'),
    publicBaseUrl: 'http://localhost:3000', lockTtlMs: 5_000, lockWaitMs: 5_000,
  };
});

afterAll(async () => {
  await prisma?.$disconnect();
  redis?.disconnect();
  await db?.drop();
});

async function seedAccount(mode: 'test' | 'live' = 'test') {
  const orgId = newId('organisation');
  const accountId = newId('bankAccount');
  await prisma.organisation.create({ data: { id: orgId, name: 'Shop', ownerEmail: 'o@example.com' } });
  await prisma.bankAccount.create({
    data: { id: accountId, organisationId: orgId, mode, bankCode: '9999', branchCode: '001', accountNumber: '1234567', holderName: 'ｼﾖﾂﾌﾟ' },
  });
  return { orgId, accountId };
}

async function seedOrder(orgId: string, accountId: string, amount: bigint) {
  return prisma.order.create({
    data: {
      id: newId('order'), organisationId: orgId, mode: 'test', bankAccountId: accountId, status: 'open', amount,
      payerName: 'ヤマダ タロウ', externalId: uniqueName('e'), itemName: 'item', orderedAt: new Date('2026-11-21T00:00:00Z'),
      expiresAt: new Date('2026-12-05T00:00:00Z'), paymentToken: uniqueName('tok'),
    },
  });
}

async function seedDeposit(orgId: string, accountId: string, amount: bigint, fields: { direction?: string; status?: string; counterparty?: string } = {}) {
  return prisma.transaction.create({
    data: {
      id: newId('transaction'), organisationId: orgId, mode: 'test', bankAccountId: accountId, bankReference: uniqueName('ref'),
      direction: fields.direction ?? 'deposit', status: fields.status ?? 'pending', amount, counterparty: fields.counterparty ?? 'ﾔﾏﾀﾞ ﾀﾛｳ',
      occurredAt: DEPOSIT_AT,
    },
  });
}

interface OrderFields {
  status?: 'open' | 'expired';
  payerName?: string;
  orderedAt?: Date;
}

/** Orders in one statement, in seq order: a fixed-price shop's history is thousands of them. */
async function seedOrders(orgId: string, accountId: string, amount: bigint, count: number, fields: OrderFields = {}): Promise<string[]> {
  const status = fields.status ?? 'open';
  const ids = Array.from({ length: count }, () => newId('order'));
  await prisma.order.createMany({
    data: ids.map((id) => ({
      id, organisationId: orgId, mode: 'test', bankAccountId: accountId, status, amount, payerName: fields.payerName ?? 'ﾔﾏﾀﾞ ﾀﾛｳ',
      externalId: uniqueName('e'), itemName: 'item', orderedAt: fields.orderedAt ?? new Date('2026-11-21T00:00:00Z'),
      expiresAt: new Date(status === 'expired' ? '2026-11-21T12:00:00Z' : '2026-12-05T00:00:00Z'),
      closedAt: status === 'expired' ? new Date('2026-11-21T12:00:00Z') : null, paymentToken: uniqueName('tok'),
    })),
  });
  return ids;
}

/** A claim of a message not processed before. */
const freshMessage = () => ({ consumer: DEPOSITS_CONSUMER, messageId: uniqueName('msg-') });

describe('lockPendingDeposit', () => {
  test('when the message was processed before, then nothing is locked or read, and the inbox keeps its one row', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 100n);
    const message = freshMessage();

    const first = await database.transaction((sql) => lockPendingDeposit(sql, deposit.id, message));
    const again = await database.transaction((sql) => lockPendingDeposit(sql, deposit.id, message));

    expect(first?.deposit.id).toBe(deposit.id);
    expect(again).toBeUndefined();
    expect(await prisma.inbox.count({ where: { consumer: message.consumer, messageId: message.messageId } })).toBe(1);
  });

  test('when the transaction that claimed the message rolls back, then the message is not marked processed and can be decided again', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 100n);
    const message = freshMessage();

    await expect(
      database.transaction(async (sql) => {
        await lockPendingDeposit(sql, deposit.id, message);
        throw new Error('the decision failed');
      }),
    ).rejects.toThrow('the decision failed');

    expect(await prisma.inbox.count({ where: { consumer: message.consumer, messageId: message.messageId } })).toBe(0);
    expect((await database.transaction((sql) => lockPendingDeposit(sql, deposit.id, message)))?.deposit.id).toBe(deposit.id);
  });

  test('when the deposit is pending, then it reads the row exactly as Prisma reads it, every column', async () => {
    const { orgId, accountId } = await seedAccount();
    const seeded = await seedDeposit(orgId, accountId, 9_999_999_999n);
    // The columns a pending deposit may fill, filled (order_id only with confirmed), so that each one's mapping from its SQL name is checked.
    await prisma.transaction.update({
      where: { id: seeded.id },
      data: { candidateOrderIds: ['ord_a', 'ord_b'], decision: { reason: 'several', candidates: [{ order_id: 'ord_a' }] }, decidedAt: now },
    });
    const expected = await prisma.transaction.findUniqueOrThrow({ where: { id: seeded.id } });

    const locked = await database.transaction((sql) => lockPendingDeposit(sql, seeded.id, freshMessage()));

    expect(locked?.deposit).toEqual(expected);
    expect(typeof locked?.deposit.amount).toBe('bigint');
    expect(typeof locked?.deposit.seq).toBe('bigint');
  });

  test('when the deposit is pending, then its amount candidates are read with it, as findAmountCandidates reads them', async () => {
    const { orgId, accountId } = await seedAccount();
    const open = await seedOrders(orgId, accountId, 720n, 2);
    const [expired] = await seedOrders(orgId, accountId, 720n, 1, { status: 'expired' });
    await seedOrders(orgId, accountId, 720n, 1, { orderedAt: new Date(DEPOSIT_AT.getTime() + 1) });
    await seedOrders(orgId, accountId, 721n, 1);
    const elsewhere = await seedAccount();
    await seedOrders(elsewhere.orgId, elsewhere.accountId, 720n, 1);
    const deposit = await seedDeposit(orgId, accountId, 720n);
    const alone = await seedDeposit(orgId, accountId, 722n);

    const [locked, lockedAlone] = await database.transaction(async (sql) => [
      await lockPendingDeposit(sql, deposit.id, freshMessage()),
      await lockPendingDeposit(sql, alone.id, freshMessage()),
    ]);
    const read = await database.transaction((sql) => findAmountCandidates(sql, accountId, 720n, DEPOSIT_AT));

    expect(locked?.candidates.orders.map((o) => o.id)).toEqual([...open, expired]);
    expect(locked?.candidates).toEqual(read);
    expect(lockedAlone?.deposit.id).toBe(alone.id);
    expect(lockedAlone?.candidates).toEqual({ orders: [], read: { allOpenOrdersRead: true } });
  });

  test('when the deposit is decided or is a withdrawal, then there is nothing to lock', async () => {
    const { orgId, accountId } = await seedAccount();
    const decided = await seedDeposit(orgId, accountId, 100n, { status: 'unmatched' });
    const withdrawal = await seedDeposit(orgId, accountId, 100n, { direction: 'withdrawal', status: 'unmatched' });

    expect(await database.transaction((sql) => lockPendingDeposit(sql, decided.id, freshMessage()))).toBeUndefined();
    expect(await database.transaction((sql) => lockPendingDeposit(sql, withdrawal.id, freshMessage()))).toBeUndefined();
    expect(await database.transaction((sql) => lockPendingDeposit(sql, 'txn_missing', freshMessage()))).toBeUndefined();
  });

  test('when it has read the deposit, then the row stays locked until the transaction ends', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 100n);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));

    const holder = database.transaction(async (sql) => {
      await lockPendingDeposit(sql, deposit.id, freshMessage());
      locked();
      await held;
    });
    await isLocked;
    const other = prisma.$executeRaw`SELECT id FROM transactions WHERE id = ${deposit.id} FOR UPDATE NOWAIT`;

    await expect(other).rejects.toThrow(/could not obtain lock|55P03/);
    release();
    await holder;
  });

  test("when the seller enabled matching rules, then the deposit's name matcher applies them; without settings only exact names fit", async () => {
    const withRules = await seedAccount();
    await prisma.setting.create({ data: { organisationId: withRules.orgId, mode: 'test', matchingRules: ['kana_width', 'rule_of_a_later_version'] } });
    await prisma.setting.create({ data: { organisationId: withRules.orgId, mode: 'live', matchingRules: [] } });
    const a = await seedDeposit(withRules.orgId, withRules.accountId, 100n);
    const withoutSettings = await seedAccount();
    const b = await seedDeposit(withoutSettings.orgId, withoutSettings.accountId, 100n);

    const [lockedA, lockedB] = await database.transaction(async (sql) => [await lockPendingDeposit(sql, a.id, freshMessage()), await lockPendingDeposit(sql, b.id, freshMessage())]);

    expect(lockedA?.nameMatcher('ﾔﾏﾀﾞ ﾀﾛｳ', 'ヤマダ タロウ')).toEqual(expect.objectContaining({ reason: 'rule:kana_width' }));
    expect(lockedB?.nameMatcher('ﾔﾏﾀﾞ ﾀﾛｳ', 'ヤマダ タロウ')).toBeUndefined();
    expect(lockedB?.nameMatcher('ヤマダ タロウ', 'ヤマダ タロウ')).toEqual(expect.objectContaining({ reason: 'exact' }));
  });
});

/**
 * The deposit decision runs these writes on plain SQL; commands and late orders run them in a
 * Prisma transaction. Each must behave the same on both.
 */
const writePaths: [string, <T>(work: (tx: SqlOrPrisma) => Promise<T>) => Promise<T>][] = [
  ['plain SQL', (work) => database.transaction(work)],
  ['a Prisma transaction', (work) => prisma.$transaction((tx) => work(tx))],
];

describe.each(writePaths)('conditional updates through %s', (_path, inTransaction) => {
  test('when the order is in a status the caller named, then it is paid and the row returned is the row stored', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n);
    const payment = depositPayment({ ...deposit, amount: 500 }, AUTOMATIC('exact'), now);

    const paid = await inTransaction((tx) => payOrder(tx, order.id, { statuses: ['open'], bankAccountId: accountId, amount: 500n, payerName: 'ヤマダ タロウ' }, payment, 'paid', now));

    expect(paid).toEqual(await prisma.order.findUniqueOrThrow({ where: { id: order.id } }));
    expect(paid).toMatchObject({ status: 'paid', closedAt: now, updatedAt: now, payment: JSON.parse(JSON.stringify(payment)) });
  });

  test('when the caller relied on the status alone, then the order is paid whatever its account, amount and payer name', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const payment = outsidePayment({ amount: 500, payerName: order.payerName }, now, now, 'api');

    const paid = await inTransaction((tx) => payOrder(tx, order.id, { statuses: ['open'] }, payment, 'paid_outside', now));

    expect(paid).toEqual(await prisma.order.findUniqueOrThrow({ where: { id: order.id } }));
    expect(paid).toMatchObject({ status: 'paid_outside', closedAt: now, payment: JSON.parse(JSON.stringify(payment)) });
  });

  test('when the order is no longer in a status the caller named, then StaleDecisionError and nothing changes', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n);
    const payment = depositPayment({ ...deposit, amount: 500 }, AUTOMATIC('exact'), now);

    await expect(inTransaction((tx) => payOrder(tx, order.id, { statuses: ['expired'] }, payment, 'paid', now))).rejects.toThrow(StaleDecisionError);
    await expect(inTransaction((tx) => payOrder(tx, 'ord_missing', { statuses: ['open'] }, payment, 'paid', now))).rejects.toThrow(StaleDecisionError);
    expect(await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).toEqual(order);
  });

  test('when the order no longer has the amount, account or payer name the caller relied on, then StaleDecisionError and nothing changes', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n);
    const payment = depositPayment({ ...deposit, amount: 500 }, AUTOMATIC('exact'), now);
    const pay = (expected: Partial<Parameters<typeof payOrder>[2]>) =>
      inTransaction((tx) => payOrder(tx, order.id, { statuses: ['open'], ...expected }, payment, 'paid', now));

    await expect(pay({ amount: 501n })).rejects.toThrow(StaleDecisionError);
    await expect(pay({ bankAccountId: 'ba_another' })).rejects.toThrow(StaleDecisionError);
    await expect(pay({ payerName: 'スズキ' })).rejects.toThrow(StaleDecisionError);
    expect(await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).toEqual(order);
  });

  test('when the deposit is in a status the caller named, then it is set and the row returned is the row stored', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 500n);
    const to = { status: 'held', orderId: null, candidateOrderIds: ['ord_a', 'ord_b'], decision: { reason: 'several', candidates: [] } };

    const held = await inTransaction((tx) => setDepositStatus(tx, deposit.id, ['pending'], to, now));

    expect(held).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } }));
    expect(held).toMatchObject({ ...to, decidedAt: now, updatedAt: now });
  });

  test('when no decision is given, then the deposit keeps its decision and when it was made', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 500n);
    const decidedBefore = new Date('2026-11-22T09:30:00Z');
    await prisma.transaction.update({ where: { id: deposit.id }, data: { decision: { reason: 'several', candidates: [] }, decidedAt: decidedBefore } });

    const held = await inTransaction((tx) => setDepositStatus(tx, deposit.id, ['pending'], { status: 'held', orderId: null, candidateOrderIds: ['ord_a'] }, now));

    expect(held).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } }));
    expect(held).toMatchObject({ status: 'held', decision: { reason: 'several', candidates: [] }, decidedAt: decidedBefore, updatedAt: now });
  });

  test('when the deposit is no longer in a status the caller named, then StaleDecisionError and nothing changes', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 500n, { status: 'unmatched' });

    await expect(
      inTransaction((tx) => setDepositStatus(tx, deposit.id, ['pending'], { status: 'held', orderId: null, candidateOrderIds: [] }, now)),
    ).rejects.toThrow(StaleDecisionError);
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toEqual(deposit);
  });

  test('when a second deposit would be confirmed for a paid order, then the partial unique index refuses it as a unique violation', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const [a, b] = [await seedDeposit(orgId, accountId, 500n), await seedDeposit(orgId, accountId, 500n)];
    const confirm = { status: 'confirmed', orderId: order.id, candidateOrderIds: [], decision: { reason: 'exact', candidates: [] } };
    await inTransaction((tx) => setDepositStatus(tx, a.id, ['pending'], confirm, now));

    const refused: unknown = await inTransaction((tx) => setDepositStatus(tx, b.id, ['pending'], confirm, now)).catch((error: unknown) => error);

    expect(isUniqueViolation(refused)).toBe(true);
    expect((await prisma.transaction.findUniqueOrThrow({ where: { id: b.id } })).status).toBe('pending');
  });
});

describe('a decision racing a change of the order (no lock on the orders it read)', () => {
  /**
   * Reads and decides inside the decision's DB transaction, lets `change` commit on another
   * connection (the decision holds no lock on the order, as a PATCH through orders-api finds it),
   * then writes the decision.
   */
  async function decideAcrossChange(depositId: string, change: () => Promise<unknown>) {
    return database.transaction(async (sql) => {
      const pending = (await lockPendingDeposit(sql, depositId, freshMessage()))!;
      const decision = decide(depositFacts(pending.deposit), pending.candidates.orders, pending.nameMatcher, now, pending.candidates.read);
      expect(decision.outcome).toBe('confirmed');
      await change();
      return applyDecision(sql, pending.deposit, decision, { publicBaseUrl: 'http://localhost:3000', now });
    });
  }

  test.each([
    ['its amount', (id: string) => prisma.$executeRaw`UPDATE orders SET amount = 999 WHERE id = ${id}`],
    ['its payer name', (id: string) => prisma.$executeRaw`UPDATE orders SET payer_name = 'スズキ イチロウ' WHERE id = ${id}`],
  ])('when %s changes between the read and the write, then the write is refused as stale and the order stays unpaid', async (_what, change) => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n, { counterparty: 'ヤマダ タロウ' });

    await expect(decideAcrossChange(deposit.id, () => change(order.id))).rejects.toThrow(new StaleDecisionError(`order ${order.id} is no longer open with what the decision saw`));

    expect(await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({ status: 'open', payment: null });
    expect((await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).status).toBe('pending');
    expect(await prisma.event.count({ where: { organisationId: orgId } })).toBe(0);
  });

  test('when the order and the deposit are as the confirmation expects, then both come back from its one statement as Prisma reads them', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n, { counterparty: 'ヤマダ タロウ' });

    const confirmed = await database.transaction((sql) =>
      confirmDeposit(sql, deposit, order.id, AUTOMATIC('exact'), { depositStatuses: ['pending'], orderStatuses: ['open'] }, { reason: 'test' }, now),
    );

    expect(confirmed.order).toEqual(await prisma.order.findUniqueOrThrow({ where: { id: order.id } }));
    expect(confirmed.transaction).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } }));
    expect(confirmed).toMatchObject({ order: { status: 'paid', closedAt: now }, transaction: { status: 'confirmed', orderId: order.id, decidedAt: now } });
  });

  test('when the deposit is no longer in the status the confirmation expects, then that is the stale part, and the order paid in the same statement is rolled back', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n, { counterparty: 'ヤマダ タロウ' });

    const confirming = database.transaction((sql) =>
      confirmDeposit(sql, deposit, order.id, AUTOMATIC('exact'), { depositStatuses: ['held'], orderStatuses: ['open'] }, { reason: 'test' }, now),
    );

    await expect(confirming).rejects.toThrow(new StaleDecisionError(`transaction ${deposit.id} is no longer held`));
    expect(await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({ status: 'open', payment: null, closedAt: null });
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toMatchObject({ status: 'pending', orderId: null });
  });

  test('when the decision is made again after the change, then the changed order is not paid', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n, { counterparty: 'ヤマダ タロウ' });
    await expect(decideAcrossChange(deposit.id, () => prisma.$executeRaw`UPDATE orders SET amount = 999 WHERE id = ${order.id}`)).rejects.toThrow(StaleDecisionError);

    const again = await decideDeposit(deps, { transaction_id: deposit.id, bank_account_id: accountId }, `m_${deposit.id}`);

    expect(again.status).toBe('unmatched');
    expect((await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('open');
  });
});

describe('findAmountCandidates', () => {
  test('when orders were placed before and after the deposit, then only those at or before it are read', async () => {
    const { orgId, accountId } = await seedAccount();
    const [before] = await seedOrders(orgId, accountId, 700n, 1, { orderedAt: new Date(DEPOSIT_AT.getTime() - 1) });
    const [atTheSameTime] = await seedOrders(orgId, accountId, 700n, 1, { orderedAt: DEPOSIT_AT });
    await seedOrders(orgId, accountId, 700n, 1, { orderedAt: new Date(DEPOSIT_AT.getTime() + 1) });
    await seedOrders(orgId, accountId, 700n, 1, { orderedAt: new Date(DEPOSIT_AT.getTime() + 1), status: 'expired' });

    const read = await database.transaction((sql) => findAmountCandidates(sql, accountId, 700n, DEPOSIT_AT));

    expect(read).toEqual({ orders: [expect.objectContaining({ id: before }), expect.objectContaining({ id: atTheSameTime })], read: { allOpenOrdersRead: true } });
  });

  test('when a fixed-price shop has more expired orders than the read takes, then every open order is read with only the newest expired ones', async () => {
    const { orgId, accountId } = await seedAccount();
    const [oldOpen] = await seedOrders(orgId, accountId, 800n, 1);
    const expired = await seedOrders(orgId, accountId, 800n, OPEN_CANDIDATE_CAP + 50, { status: 'expired', payerName: 'ｽｽﾞｷ ｲﾁﾛｳ' });
    const [newOpen] = await seedOrders(orgId, accountId, 800n, 1);

    const read = await database.transaction((sql) => findAmountCandidates(sql, accountId, 800n, DEPOSIT_AT));

    expect(read.read.allOpenOrdersRead).toBe(true);
    expect(read.orders.map((o) => o.id)).toEqual([oldOpen, ...expired.slice(-EXPIRED_CANDIDATE_LIMIT), newOpen]);
  });

  test('when the newest order ties with an old one behind many expired orders, then the deposit is held with both, not paid to the old one', async () => {
    const { orgId, accountId } = await seedAccount();
    const [oldOpen] = await seedOrders(orgId, accountId, 810n, 1);
    await seedOrders(orgId, accountId, 810n, OPEN_CANDIDATE_CAP, { status: 'expired', payerName: 'ｽｽﾞｷ ｲﾁﾛｳ' });
    const [newOpen] = await seedOrders(orgId, accountId, 810n, 1);
    const deposit = await seedDeposit(orgId, accountId, 810n);

    const decided = await decideDeposit(deps, { transaction_id: deposit.id, bank_account_id: accountId }, `m_${deposit.id}`);

    expect(decided).toMatchObject({ status: 'held', candidateOrderIds: [oldOpen, newOpen] });
  });

  test('when more open orders have the amount than the cap, then the deposit is held as too_many_candidates with at most 100 listed', async () => {
    const { orgId, accountId } = await seedAccount();
    await seedOrders(orgId, accountId, 900n, OPEN_CANDIDATE_CAP + 1);
    const deposit = await seedDeposit(orgId, accountId, 900n);

    const read = await database.transaction((sql) => findAmountCandidates(sql, accountId, 900n, DEPOSIT_AT));
    const decided = await decideDeposit(deps, { transaction_id: deposit.id, bank_account_id: accountId }, `m_${deposit.id}`);

    expect(read.read.allOpenOrdersRead).toBe(false);
    expect(decided.status).toBe('held');
    expect(decided.candidateOrderIds).toHaveLength(LIMITS.maxHeldCandidates);
    expect(decided.decision).toMatchObject({ reason: 'too_many_candidates' });
  });

  // The statements are prepared once per connection: PostgreSQL plans them for the values given at
  // first, and may switch to a generic plan, made without them, after five executions. Both must
  // walk the index, whether the account and amount are parameters (the late-order check) or the
  // locked deposit's columns (the deposit's decision).
  const readsOfCandidates = [
    ['amountCandidates', amountCandidates.text, (accountId: string, _depositId: string) => `'${accountId}', 950, '${DEPOSIT_AT.toISOString()}'`],
    ['claimAndLockPending', claimAndLockPending.text, (_accountId: string, depositId: string) => `'${depositId}', '${DEPOSITS_CONSUMER}', 'plan-check'`],
  ] as const;

  test.each(readsOfCandidates.flatMap(([name, text, values]) => PLAN_CACHE_MODES.map((mode) => [name, mode, text, values] as const)))(
    'when %s is planned (%s), then both halves of the candidates walk orders_candidates_idx in seq order: no sort, no scan of the table',
    async (_name, planCacheMode, text, values) => {
      const { orgId, accountId } = await seedAccount();
      await seedOrders(orgId, accountId, 950n, 200, { status: 'expired' });
      await seedOrders(orgId, accountId, 950n, 20);
      // Orders of other amounts and accounts, as any table of orders holds: on a table of little
      // but this account's amount, walking all orders by seq is as good a plan, and is chosen.
      for (const account of [{ orgId, accountId }, await seedAccount(), await seedAccount(), await seedAccount()]) {
        await prisma.$executeRaw`
          INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token)
          SELECT 'ord_' || md5(random()::text), ${account.orgId}, 'test', ${account.accountId}, 'open', 1000 + g % 97, 'ﾔﾏﾀﾞ ﾀﾛｳ',
                 md5(random()::text), 'item', '2026-11-21T00:00:00Z', '2026-12-05T00:00:00Z', md5(random()::text)
          FROM generate_series(1, 2000) g`;
      }
      const deposit = await seedDeposit(orgId, accountId, 950n);
      await prisma.$executeRaw`ANALYZE orders`;

      // Turned off, a sequential scan, a bitmap scan or a sort is still chosen when nothing else can
      // answer the query: seeing none proves the index answers it in order.
      const plan = await preparedPlan(prisma, text, values(accountId, deposit.id), planCacheMode, ['enable_seqscan = off', 'enable_bitmapscan = off', 'enable_sort = off']);

      const nodes = planNodes(plan);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Seq Scan');
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Bitmap Heap Scan');
      const ordersScans = nodes.filter((n) => n['Relation Name'] === 'orders');
      expect(ordersScans.map((n) => [n['Index Name'], n['Scan Direction']])).toEqual([
        ['orders_candidates_idx', 'Forward'],
        ['orders_candidates_idx', 'Backward'],
      ]);
    },
  );
});
