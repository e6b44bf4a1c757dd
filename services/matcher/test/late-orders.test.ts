import { newId } from '@pmatch/contracts';
import { createPrisma, type PrismaClient } from '@pmatch/db';
import { ManualClock, RedisLock, createLogger } from '@pmatch/platform';
import { REDIS_URL, createTestDatabase, uniqueName, type TestDatabase } from '@pmatch/testkit';
import { Redis } from 'ioredis';
import type { MatcherDeps } from '../src/use-cases/deps';
import { examineLateOrder } from '../src/use-cases/late-orders';

/**
 * examineLateOrder against the real database: the common case (no deposit waits for the order)
 * writes only its inbox row, and a deposit that does wait is decided once however often the message comes.
 */

let db: TestDatabase;
let prisma: PrismaClient;
let redis: Redis;
let deps: MatcherDeps;
const clock = new ManualClock('2026-11-22T10:00:00Z');

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url);
  redis = new Redis(REDIS_URL);
  deps = {
    prisma, lock: new RedisLock(redis, uniqueName('pmatch-test:')), clock, logger: createLogger('test', 'silent'),
    publicBaseUrl: 'http://localhost:3000', lockTtlMs: 5_000, lockWaitMs: 5_000,
  };
});

afterAll(async () => {
  await prisma?.$disconnect();
  redis?.disconnect();
  await db?.drop();
});

async function seedAccount() {
  const orgId = newId('organisation');
  const accountId = newId('bankAccount');
  await prisma.organisation.create({ data: { id: orgId, name: 'Shop', ownerEmail: 'o@example.com' } });
  await prisma.bankAccount.create({
    data: { id: accountId, organisationId: orgId, mode: 'test', bankCode: '9999', branchCode: '001', accountNumber: '1234567', holderName: 'ｼﾖﾂﾌﾟ' },
  });
  return { orgId, accountId };
}

async function seedOrder(orgId: string, accountId: string, amount: number, orderedAt: string) {
  return prisma.order.create({
    data: {
      id: newId('order'), organisationId: orgId, mode: 'test', bankAccountId: accountId, status: 'open', amount: BigInt(amount),
      payerName: 'ﾔﾏﾀﾞ', externalId: uniqueName('e'), itemName: 'item', orderedAt: new Date(orderedAt),
      expiresAt: new Date('2026-12-05T00:00:00Z'), paymentToken: uniqueName('tok'),
    },
  });
}

async function seedUnmatchedDeposit(orgId: string, accountId: string, amount: number, occurredAt: string) {
  return prisma.transaction.create({
    data: {
      id: newId('transaction'), organisationId: orgId, mode: 'test', bankAccountId: accountId, bankReference: uniqueName('ref'),
      direction: 'deposit', status: 'unmatched', amount: BigInt(amount), counterparty: 'ﾔﾏﾀﾞ', occurredAt: new Date(occurredAt),
    },
  });
}

const written = async (orgId: string, messageId: string) => ({
  events: await prisma.event.count({ where: { organisationId: orgId } }),
  inbox: await prisma.inbox.count({ where: { messageId } }),
});

describe('examineLateOrder', () => {
  test('when no unmatched deposit fits the new order, then nothing is written but the inbox row', async () => {
    const { orgId, accountId } = await seedAccount();
    // Another amount, and the right amount but before the order was placed: neither fits.
    await seedUnmatchedDeposit(orgId, accountId, 999, '2026-11-22T09:00:00Z');
    await seedUnmatchedDeposit(orgId, accountId, 4000, '2026-11-20T09:00:00Z');
    const order = await seedOrder(orgId, accountId, 4000, '2026-11-21T00:00:00Z');

    const recorded = await examineLateOrder(deps, { order_id: order.id, bank_account_id: accountId }, `registered_${order.id}`);

    expect(recorded).toBe(false);
    expect(await written(orgId, `registered_${order.id}`)).toEqual({ events: 0, inbox: 1 });
    expect(await prisma.transaction.count({ where: { bankAccountId: accountId, status: 'unmatched' } })).toBe(2);
  });

  test('when an unmatched deposit fits, then it is held once with transaction.held, and the same message again changes nothing', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedUnmatchedDeposit(orgId, accountId, 4100, '2026-11-22T09:00:00Z');
    const order = await seedOrder(orgId, accountId, 4100, '2026-11-21T00:00:00Z');
    const message = { order_id: order.id, bank_account_id: accountId };

    const recorded = [await examineLateOrder(deps, message, `registered_${order.id}`), await examineLateOrder(deps, message, `registered_${order.id}`)];

    expect(recorded).toEqual([true, false]);

    const held = await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } });
    expect(held).toMatchObject({ status: 'held', candidateOrderIds: [order.id] });
    expect(await written(orgId, `registered_${order.id}`)).toEqual({ events: 1, inbox: 1 });
    expect((await prisma.event.findFirstOrThrow({ where: { organisationId: orgId } })).type).toBe('transaction.held');
  });

  test('when the order is no longer open, then a fitting deposit stays unmatched', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedUnmatchedDeposit(orgId, accountId, 4200, '2026-11-22T09:00:00Z');
    const order = await seedOrder(orgId, accountId, 4200, '2026-11-21T00:00:00Z');
    await prisma.order.update({ where: { id: order.id }, data: { status: 'canceled', closedAt: new Date('2026-11-22T09:30:00Z') } });

    await examineLateOrder(deps, { order_id: order.id, bank_account_id: accountId }, `registered_${order.id}`);

    expect((await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).status).toBe('unmatched');
    expect(await written(orgId, `registered_${order.id}`)).toEqual({ events: 0, inbox: 1 });
  });
});
