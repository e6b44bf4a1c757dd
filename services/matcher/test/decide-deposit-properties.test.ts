import { NAME_RULES, newId } from '@pmatch/contracts';
import { type Database, type PrismaClient } from '@pmatch/db';
import { ManualClock, RedisLock, createLogger } from '@pmatch/platform';
import { uniqueName } from '@pmatch/testkit';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { depositDecider, type DecideDepositDeps } from '../src/use-cases/decide-deposit';
import { NAME_CORPUS } from './fixtures/names-corpus';
import { MINUTE, OCCURRED_AT, amount, nearbyOrder, placed } from './support/scenarios';
import { testReadings } from './support/readings';
import type { NameReadings } from '../src/domain/names/readings';
import { useMatcherStores } from './support/stores';

/**
 * The safety property (never a wrong confirmation) over the whole use case and the REAL database: generated orders
 * are stored (two accounts, three amounts, every status, placed before and after the deposit,
 * expiring before and after the decision), a pending deposit is decided by depositDecider — the
 * candidate read in SQL, decide(), the conditional writes — and whatever it decides, it never
 * pays an order of another account or amount, or one placed after the deposit.
 */

const RUNS = { numRuns: 150 };

let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let readings: NameReadings;
let lock: RedisLock;

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  lock = new RedisLock(redis, uniqueName('pmatch-test:'));
  readings = await testReadings();
});

const scenario = fc.record({
  caseIndex: fc.nat({ max: NAME_CORPUS.length - 1 }),
  rules: fc.subarray([...NAME_RULES]),
  depositOnSecondAccount: fc.boolean(),
  amount,
  nowAfterMinutes: fc.integer({ min: 0, max: 3 * 24 * 60 }),
  orders: fc.array(nearbyOrder, { maxLength: 8 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

async function store(s: Scenario) {
  const orgId = newId('organisation');
  const accounts = [newId('bankAccount'), newId('bankAccount')];
  await prisma.organisation.create({ data: { id: orgId, name: 'Shop', ownerEmail: 'o@example.com' } });
  for (const [i, id] of accounts.entries()) {
    await prisma.bankAccount.create({
      data: { id, organisationId: orgId, mode: 'live', bankCode: '9999', branchCode: '001', accountNumber: `123456${i}`, holderName: 'ｼﾖﾂﾌﾟ' },
    });
  }
  await prisma.setting.create({ data: { organisationId: orgId, mode: 'live', matchingRules: s.rules } });
  const nameCase = NAME_CORPUS[s.caseIndex]!;
  await prisma.order.createMany({
    data: s.orders.map((o) => {
      const { payerName, orderedAt, expiresAt } = placed(o, nameCase);
      const closed = o.status !== 'open';
      return {
        id: newId('order'),
        organisationId: orgId,
        mode: 'live',
        bankAccountId: accounts[o.onSecondAccount ? 1 : 0]!,
        status: o.status,
        amount: BigInt(o.amount),
        payerName,
        externalId: uniqueName('e'),
        itemName: 'item',
        orderedAt,
        expiresAt,
        closedAt: closed ? expiresAt : null,
        payment: o.status === 'paid' ? { reason: 'exact' } : undefined,
        paymentToken: uniqueName('tok'),
      };
    }),
  });
  const deposit = await prisma.transaction.create({
    data: {
      id: newId('transaction'),
      organisationId: orgId,
      mode: 'live',
      bankAccountId: accounts[s.depositOnSecondAccount ? 1 : 0]!,
      bankReference: uniqueName('ref'),
      direction: 'deposit',
      status: 'pending',
      amount: BigInt(s.amount),
      counterparty: nameCase.depositor,
      occurredAt: new Date(OCCURRED_AT),
    },
  });
  return { orgId, deposit };
}

describe('depositDecider over the database (properties)', () => {
  test('when a deposit is decided, then it is never paid to, nor held for, an order of another account or amount or placed after it', async () => {
    const outcomes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { orgId, deposit } = await store(s);
        const deps: DecideDepositDeps = {
          database,
          prisma,
          lock,
          clock: new ManualClock(new Date(OCCURRED_AT + s.nowAfterMinutes * MINUTE)),
          logger: createLogger('test', 'silent'),
          publicBaseUrl: 'http://localhost:3000',
          lockTtlMs: 5_000,
          lockWaitMs: 5_000,
          readings,
          handOver: () => undefined,
        };

        const decided = await depositDecider(deps)({ transaction_id: deposit.id, bank_account_id: deposit.bankAccountId }, `m_${deposit.id}`);

        outcomes.add(decided.status);
        const named = [...decided.candidateOrderIds, ...(decided.orderId === null ? [] : [decided.orderId])];
        const orders = await prisma.order.findMany({ where: { id: { in: named } } });
        expect(orders).toHaveLength(named.length);
        for (const order of orders) {
          expect(order.bankAccountId).toBe(deposit.bankAccountId);
          expect(order.amount).toBe(deposit.amount);
          expect(order.orderedAt.getTime()).toBeLessThanOrEqual(deposit.occurredAt.getTime());
        }
        const paid = await prisma.order.findMany({ where: { organisationId: orgId, payment: { path: ['transaction_id'], equals: deposit.id } } });
        expect(paid.map((o) => o.id)).toEqual(decided.status === 'confirmed' ? [decided.orderId] : []);
        if (decided.status === 'confirmed') expect(paid[0]!.expiresAt.getTime()).toBeGreaterThanOrEqual(deps.clock.now().getTime());
      }),
      RUNS,
    );
    expect([...outcomes].sort()).toEqual(['confirmed', 'held', 'unmatched']);
  });
});
