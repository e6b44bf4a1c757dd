import { newId } from '@pmatch/contracts';
import { createPrisma, isUniqueViolation, type PrismaClient } from '@pmatch/db';
import { createTestDatabase, uniqueName, type TestDatabase } from '@pmatch/testkit';
import { StaleDecisionError, lockPendingDeposit, payOrder, setDepositStatus } from '../src/data/decisions';
import { AUTOMATIC, depositPayment } from '../src/domain/payments';

let db: TestDatabase;
let prisma: PrismaClient;
const now = new Date('2026-11-22T10:00:00.123Z');

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url);
});

afterAll(async () => {
  await prisma?.$disconnect();
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

async function seedDeposit(orgId: string, accountId: string, amount: bigint, fields: { direction?: string; status?: string } = {}) {
  return prisma.transaction.create({
    data: {
      id: newId('transaction'), organisationId: orgId, mode: 'test', bankAccountId: accountId, bankReference: uniqueName('ref'),
      direction: fields.direction ?? 'deposit', status: fields.status ?? 'pending', amount, counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
      occurredAt: new Date('2026-11-22T09:00:00.456Z'),
    },
  });
}

describe('lockPendingDeposit', () => {
  test('when the deposit is pending, then it reads the row exactly as Prisma reads it, every column', async () => {
    const { orgId, accountId } = await seedAccount();
    const seeded = await seedDeposit(orgId, accountId, 9_999_999_999n);
    // The columns a pending deposit may fill, filled (order_id only with confirmed), so that each one's mapping from its SQL name is checked.
    await prisma.transaction.update({
      where: { id: seeded.id },
      data: { candidateOrderIds: ['ord_a', 'ord_b'], decision: { reason: 'several', candidates: [{ order_id: 'ord_a' }] }, decidedAt: now },
    });
    const expected = await prisma.transaction.findUniqueOrThrow({ where: { id: seeded.id } });

    const locked = await prisma.$transaction((tx) => lockPendingDeposit(tx, seeded.id));

    expect(locked?.deposit).toEqual(expected);
    expect(typeof locked?.deposit.amount).toBe('bigint');
    expect(typeof locked?.deposit.seq).toBe('bigint');
  });

  test('when the deposit is decided or is a withdrawal, then there is nothing to lock', async () => {
    const { orgId, accountId } = await seedAccount();
    const decided = await seedDeposit(orgId, accountId, 100n, { status: 'unmatched' });
    const withdrawal = await seedDeposit(orgId, accountId, 100n, { direction: 'withdrawal', status: 'unmatched' });

    expect(await prisma.$transaction((tx) => lockPendingDeposit(tx, decided.id))).toBeUndefined();
    expect(await prisma.$transaction((tx) => lockPendingDeposit(tx, withdrawal.id))).toBeUndefined();
    expect(await prisma.$transaction((tx) => lockPendingDeposit(tx, 'txn_missing'))).toBeUndefined();
  });

  test('when it has read the deposit, then the row stays locked until the transaction ends', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 100n);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));

    const holder = prisma.$transaction(async (tx) => {
      await lockPendingDeposit(tx, deposit.id);
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

    const [lockedA, lockedB] = await prisma.$transaction(async (tx) => [await lockPendingDeposit(tx, a.id), await lockPendingDeposit(tx, b.id)]);

    expect(lockedA?.nameMatcher('ﾔﾏﾀﾞ ﾀﾛｳ', 'ヤマダ タロウ')).toEqual(expect.objectContaining({ reason: 'rule:kana_width' }));
    expect(lockedB?.nameMatcher('ﾔﾏﾀﾞ ﾀﾛｳ', 'ヤマダ タロウ')).toBeUndefined();
    expect(lockedB?.nameMatcher('ヤマダ タロウ', 'ヤマダ タロウ')).toEqual(expect.objectContaining({ reason: 'exact' }));
  });
});

describe('conditional updates', () => {
  test('when the order is in a status the caller named, then it is paid and the row returned is the row stored', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n);
    const payment = depositPayment({ ...deposit, amount: 500 }, AUTOMATIC('exact'), now);

    const paid = await prisma.$transaction((tx) => payOrder(tx, order.id, ['open'], payment, 'paid', now));

    expect(paid).toEqual(await prisma.order.findUniqueOrThrow({ where: { id: order.id } }));
    expect(paid).toMatchObject({ status: 'paid', closedAt: now, updatedAt: now, payment: JSON.parse(JSON.stringify(payment)) });
  });

  test('when the order is no longer in a status the caller named, then StaleDecisionError and nothing changes', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n);
    const payment = depositPayment({ ...deposit, amount: 500 }, AUTOMATIC('exact'), now);

    await expect(prisma.$transaction((tx) => payOrder(tx, order.id, ['expired'], payment, 'paid', now))).rejects.toThrow(StaleDecisionError);
    await expect(prisma.$transaction((tx) => payOrder(tx, 'ord_missing', ['open'], payment, 'paid', now))).rejects.toThrow(StaleDecisionError);
    expect(await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).toEqual(order);
  });

  test('when the deposit is in a status the caller named, then it is set and the row returned is the row stored', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 500n);
    const to = { status: 'held', orderId: null, candidateOrderIds: ['ord_a', 'ord_b'], decision: { reason: 'several', candidates: [] } };

    const held = await prisma.$transaction((tx) => setDepositStatus(tx, deposit.id, ['pending'], to, now));

    expect(held).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } }));
    expect(held).toMatchObject({ ...to, decidedAt: now, updatedAt: now });
  });

  test('when the deposit is no longer in a status the caller named, then StaleDecisionError and nothing changes', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 500n, { status: 'unmatched' });

    await expect(
      prisma.$transaction((tx) => setDepositStatus(tx, deposit.id, ['pending'], { status: 'held', orderId: null, candidateOrderIds: [] }, now)),
    ).rejects.toThrow(StaleDecisionError);
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toEqual(deposit);
  });

  test('when a second deposit would be confirmed for a paid order, then the partial unique index refuses it as a unique violation', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const [a, b] = [await seedDeposit(orgId, accountId, 500n), await seedDeposit(orgId, accountId, 500n)];
    const confirm = { status: 'confirmed', orderId: order.id, candidateOrderIds: [], decision: { reason: 'exact', candidates: [] } };
    await prisma.$transaction((tx) => setDepositStatus(tx, a.id, ['pending'], confirm, now));

    const refused: unknown = await prisma.$transaction((tx) => setDepositStatus(tx, b.id, ['pending'], confirm, now)).catch((error: unknown) => error);

    expect(isUniqueViolation(refused)).toBe(true);
    expect((await prisma.transaction.findUniqueOrThrow({ where: { id: b.id } })).status).toBe('pending');
  });
});
