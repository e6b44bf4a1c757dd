import { type Database, type LeasedMessage, type PrismaClient } from '@pmatch/db';
import { ManualClock, OutOfScopeError, RedisLock, continueTrace, createLogger, formatTraceparent, runInTrace } from '@pmatch/platform';
import { PLAN_CACHE_MODES, notingQueries, planNodes, preparedPlan, uniqueName } from '@pmatch/testkit';
import type { Redis } from 'ioredis';
import { writeDecisionsBatchedQuery } from '../src/data/decisions-batched';
import { readDepositsQuery } from '../src/data/deposit-to-decide';
import { depositDecider, type DecideDepositDeps } from '../src/use-cases/decide-deposit';
import { PENDING_GRACE_MS, redeliverPendingDeposits } from '../src/use-cases/redeliver-pending';
import { stuckPendingDeposits } from '../src/data/pending-deposits';
import { seedAccount as seedTestAccount, seedDeposit as seedTestDeposit, seedOrder as seedTestOrder } from './support/seed';
import { testReadings } from './support/readings';
import type { NameReadings } from '../src/domain/names/readings';
import { useMatcherStores } from './support/stores';

let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let readings: NameReadings;
const clock = new ManualClock('2026-11-22T10:00:00Z');

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  readings = await testReadings();
});

const seedAccount = () => seedTestAccount(prisma);

const seedOrder = (orgId: string, accountId: string, amount: number) => seedTestOrder(prisma, orgId, accountId, BigInt(amount));

const seedDeposit = (orgId: string, accountId: string, amount: number) => seedTestDeposit(prisma, orgId, accountId, BigInt(amount));

function deps(lock: Pick<RedisLock, 'withLock'>): DecideDepositDeps {
  return {
    database,
    prisma,
    lock: lock as RedisLock,
    clock,
    logger: createLogger('test', 'silent'),
    publicBaseUrl: 'http://localhost:3000',
    lockTtlMs: 5_000,
    lockWaitMs: 5_000,
    readings,
    handOver: () => undefined,
  };
}

/** A lock that has expired under its holders: it lets everyone in, as a lost Redis lock would. */
const lostLock = { withLock: <T>(_name: string, _options: unknown, work: () => Promise<T>) => work() };

describe('depositDecider', () => {
  test("when the message names another bank account than the deposit's, or a transaction that does not exist, then it is out of scope and nothing is decided", async () => {
    const mine = await seedAccount();
    const theirs = await seedAccount();
    await seedOrder(theirs.orgId, theirs.accountId, 5100);
    const deposit = await seedDeposit(theirs.orgId, theirs.accountId, 5100);
    const lock = new RedisLock(redis, uniqueName('pmatch-test:'));
    const decide = depositDecider(deps(lock));

    await expect(decide({ transaction_id: deposit.id, bank_account_id: mine.accountId }, 'm-forged')).rejects.toThrow(OutOfScopeError);
    await expect(decide({ transaction_id: 'txn_missing', bank_account_id: mine.accountId }, 'm-forged-2')).rejects.toThrow(OutOfScopeError);

    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toMatchObject({ status: 'pending', orderId: null });
    expect(await prisma.inbox.count({ where: { messageId: { in: ['m-forged', 'm-forged-2'] } } })).toBe(0);
    // The real message still decides it.
    expect((await decide({ transaction_id: deposit.id, bank_account_id: theirs.accountId }, 'm-real')).status).toBe('confirmed');
  });

  test('when the lock is lost and two deposits race for one order, then the database lets exactly one confirm', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedTestOrder(prisma, orgId, accountId, 5000n, { orderedAt: new Date('2026-11-17T00:00:00Z') });
    // Each on a day of its own: two of one day would be possible duplicates, held whatever the race.
    const deposits = await Promise.all(
      [18, 19, 20, 21].map((day) => seedTestDeposit(prisma, orgId, accountId, 5000n, { occurredAt: new Date(`2026-11-${day}T03:00:00Z`) })),
    );

    // One decider and one for each: decisions written in one statement race, and so do statements.
    const together = depositDecider(deps(lostLock));
    const deciderOf = (i: number) => (i % 2 === 0 ? together : depositDecider(deps(lostLock)));
    const results = await Promise.all(deposits.map((d, i) => deciderOf(i)({ transaction_id: d.id, bank_account_id: accountId }, `m_${d.id}`)));

    expect(results.filter((t) => t.status === 'confirmed')).toHaveLength(1);
    expect(results.filter((t) => t.status === 'unmatched')).toHaveLength(3);
    const paid = await prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(paid.status).toBe('paid');
    expect((paid.payment as { transaction_id: string }).transaction_id).toBe(results.find((t) => t.status === 'confirmed')!.id);
    const events = await prisma.event.findMany({ where: { organisationId: orgId, type: 'order.paid' } });
    expect(events).toHaveLength(1);
  });

  test('when the same message is handled twice, then the second changes nothing', async () => {
    const { orgId, accountId } = await seedAccount();
    await seedOrder(orgId, accountId, 700);
    const deposit = await seedDeposit(orgId, accountId, 700);
    const lock = new RedisLock(redis, uniqueName('pmatch-test:'));

    const first = await depositDecider(deps(lock))({ transaction_id: deposit.id, bank_account_id: accountId }, 'm-1');
    const eventsAfterFirst = await prisma.event.count({ where: { organisationId: orgId } });
    const second = await depositDecider(deps(lock))({ transaction_id: deposit.id, bank_account_id: accountId }, 'm-1');

    expect(first.status).toBe('confirmed');
    expect(second).toEqual(first);
    expect(await prisma.event.count({ where: { organisationId: orgId } })).toBe(eventsAfterFirst);
  });

  test('when another message comes for a deposit already decided, then it changes nothing and answers the deposit as stored', async () => {
    const { orgId, accountId } = await seedAccount();
    await seedOrder(orgId, accountId, 800);
    const deposit = await seedDeposit(orgId, accountId, 800);
    const lock = new RedisLock(redis, uniqueName('pmatch-test:'));
    await depositDecider(deps(lock))({ transaction_id: deposit.id, bank_account_id: accountId }, 'm-first');
    const eventsAfterFirst = await prisma.event.count({ where: { organisationId: orgId } });

    const again = await depositDecider(deps(lock))({ transaction_id: deposit.id, bank_account_id: accountId }, 'm-asked-again');

    expect(again).toEqual(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } }));
    expect(again.status).toBe('confirmed');
    expect(await prisma.event.count({ where: { organisationId: orgId } })).toBe(eventsAfterFirst);
  });

  test('when two deposits would be confirmed for one order by hand, then the partial unique index refuses the second', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 900);
    const [a, b] = await Promise.all([seedDeposit(orgId, accountId, 900), seedDeposit(orgId, accountId, 900)]);
    await prisma.transaction.update({ where: { id: a.id }, data: { status: 'confirmed', orderId: order.id } });

    await expect(prisma.transaction.update({ where: { id: b.id }, data: { status: 'confirmed', orderId: order.id } })).rejects.toThrow();
  });
});

describe('depositDecider: the deposits of one account that wait for its lock are decided under one hold', () => {
  /** A decider whose statements are noted, and the account's lock held by another process until `release`. */
  async function deciderWithLockHeldElsewhere(accountId: string) {
    const prefix = uniqueName('pmatch-test:');
    const statements: string[] = [];
    const announced: LeasedMessage[] = [];
    const logger = createLogger('test', 'silent');
    const warnings = jest.spyOn(logger, 'warn');
    const noted = { ...deps(new RedisLock(redis, prefix)), logger, handOver: (messages: LeasedMessage[]) => void announced.push(...messages) };
    const decide = depositDecider({ ...noted, database: { ...database, sql: notingQueries(database.sql, statements) } });
    const key = `${prefix}lock:account:${accountId}`;
    await redis.set(key, 'another-process', 'PX', 10_000);
    return { decide, statements, announced, warnings, release: () => redis.del(key) };
  }

  const reads = (statements: string[]) => statements.filter((s) => s === readDepositsQuery.name).length;
  const writes = (statements: string[]) => statements.filter((s) => s === writeDecisionsBatchedQuery.name).length;

  test('when ten deposits wait, then one read and one write decide them all, each as it would be alone', async () => {
    const { orgId, accountId } = await seedAccount();
    const amounts = Array.from({ length: 10 }, (_, i) => 6000 + i);
    const orders = await Promise.all(amounts.map((a) => seedOrder(orgId, accountId, a)));
    const deposits = await Promise.all(amounts.map((a) => seedDeposit(orgId, accountId, a)));
    const held = await deciderWithLockHeldElsewhere(accountId);

    const deciding = deposits.map((d) => held.decide({ transaction_id: d.id, bank_account_id: accountId }, `m_${d.id}`));
    await held.release();
    const decided = await Promise.all(deciding);

    expect(decided.map((t) => [t.status, t.orderId])).toEqual(orders.map((o) => ['confirmed', o.id]));
    expect([reads(held.statements), writes(held.statements)]).toEqual([1, 1]);
    expect(await prisma.inbox.count({ where: { messageId: { in: deposits.map((d) => `m_${d.id}`) } } })).toBe(10);
  });

  test("when a deposit's candidate is paid by a decision before it in the hold, then it is decided after that one is written, as one at a time would", async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 7000);
    const first = await seedDeposit(orgId, accountId, 7000);
    // A day before the first: of one day, the second would be the first's possible duplicate.
    const second = await seedTestDeposit(prisma, orgId, accountId, 7000n, { occurredAt: new Date('2026-11-21T05:00:00Z') });
    const other = await seedDeposit(orgId, accountId, 7100);
    const held = await deciderWithLockHeldElsewhere(accountId);

    const deciding = [first!, second!, other].map((d) => held.decide({ transaction_id: d.id, bank_account_id: accountId }, `m_${d.id}`));
    await held.release();
    const [a, b, c] = await Promise.all(deciding);

    expect([a!.status, a!.orderId]).toEqual(['confirmed', order.id]);
    // Seen after the payment: no open order with its amount is left.
    expect(b).toMatchObject({ status: 'unmatched', orderId: null, decision: { reason: 'no_order_with_amount' } });
    expect(c!.status).toBe('unmatched');
    // Not written on the first read and found stale: left for a second round, with the deposit after it.
    expect(held.warnings).not.toHaveBeenCalled();
    expect(held.statements.filter((s) => s === readDepositsQuery.name || s === writeDecisionsBatchedQuery.name)).toEqual([
      readDepositsQuery.name,
      writeDecisionsBatchedQuery.name,
      readDepositsQuery.name,
      writeDecisionsBatchedQuery.name,
    ]);
    expect(await prisma.event.count({ where: { organisationId: orgId, type: 'order.paid' } })).toBe(1);
  });

  test('when two messages in one hold name the same deposit, then it is decided once and both are answered with it', async () => {
    const { orgId, accountId } = await seedAccount();
    await seedOrder(orgId, accountId, 7200);
    const deposit = await seedDeposit(orgId, accountId, 7200);
    const held = await deciderWithLockHeldElsewhere(accountId);

    const deciding = ['m-original', 'm-asked-again'].map((m) => held.decide({ transaction_id: deposit.id, bank_account_id: accountId }, m));
    await held.release();
    const [original, again] = await Promise.all(deciding);

    expect(original!.status).toBe('confirmed');
    expect(again).toEqual(original);
    expect(await prisma.event.count({ where: { organisationId: orgId, type: 'transaction.deposited' } })).toBe(1);
    expect(held.warnings).not.toHaveBeenCalled();
  });

  test("when messages of different traces are decided in one hold, then each decision's announcements carry its own message's trace", async () => {
    const { orgId, accountId } = await seedAccount();
    const deposits = [await seedDeposit(orgId, accountId, 7300), await seedDeposit(orgId, accountId, 7301)];
    const traces = deposits.map(() => continueTrace());
    const held = await deciderWithLockHeldElsewhere(accountId);

    const deciding = deposits.map((d, i) => runInTrace(traces[i]!, () => held.decide({ transaction_id: d.id, bank_account_id: accountId }, `m_${d.id}`)));
    await held.release();
    await Promise.all(deciding);

    expect(writes(held.statements)).toBe(1);
    const events = await prisma.event.findMany({ where: { organisationId: orgId } });
    const tracesOf = (transactionId: string) => {
      const eventIds = events.filter((e) => (e.data as { object: { id: string } }).object.id === transactionId).map((e) => e.id);
      return held.announced.filter((m) => JSON.stringify(m.payload).includes(eventIds[0]!)).map((m) => m.traceparent);
    };
    expect(tracesOf(deposits[0]!.id)).toEqual([formatTraceparent(traces[0]!)]);
    expect(tracesOf(deposits[1]!.id)).toEqual([formatTraceparent(traces[1]!)]);
  });

  test('when one of the waiting messages is out of scope, then only it is refused', async () => {
    const { orgId, accountId } = await seedAccount();
    const theirs = await seedAccount();
    const foreign = await seedDeposit(theirs.orgId, theirs.accountId, 7400);
    const mine = await seedDeposit(orgId, accountId, 7400);
    const held = await deciderWithLockHeldElsewhere(accountId);

    const forged = held.decide({ transaction_id: foreign.id, bank_account_id: accountId }, 'm-forged');
    forged.catch(() => undefined);
    const real = held.decide({ transaction_id: mine.id, bank_account_id: accountId }, `m_${mine.id}`);
    await held.release();

    await expect(forged).rejects.toThrow(OutOfScopeError);
    expect((await real).status).toBe('unmatched');
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: foreign.id } })).toMatchObject({ status: 'pending' });
  });
});

describe('redeliverPendingDeposits', () => {
  test('when a deposit stayed pending past the grace period, then it is asked for again once, and that decides it', async () => {
    const { orgId, accountId } = await seedAccount();
    await seedOrder(orgId, accountId, 1234);
    const stuck = await seedDeposit(orgId, accountId, 1234);
    await prisma.transaction.update({ where: { id: stuck.id }, data: { updatedAt: new Date(clock.now().getTime() - PENDING_GRACE_MS - 1) } });
    const fresh = await seedDeposit(orgId, accountId, 1234);
    await prisma.transaction.update({ where: { id: fresh.id }, data: { updatedAt: clock.now() } });
    const lock = new RedisLock(redis, uniqueName('pmatch-test:'));

    expect(await redeliverPendingDeposits(deps(lock))).toBeGreaterThanOrEqual(1);
    expect(await redeliverPendingDeposits(deps(lock))).toBe(0);

    const asked = await prisma.outbox.findMany({ where: { messageId: { startsWith: `redeliver_${stuck.id}` } } });
    expect(asked).toHaveLength(1);
    expect(await prisma.outbox.count({ where: { messageId: { startsWith: `redeliver_${fresh.id}` } } })).toBe(0);
    const decided = await depositDecider(deps(lock))(asked[0]!.payload as { transaction_id: string; bank_account_id: string }, asked[0]!.messageId);
    expect(decided.status).toBe('confirmed');
  });

  test.each(PLAN_CACHE_MODES)(
    'when the table holds thousands of decided deposits, then the look for stuck ones (%s) walks the index of pending deposits in seq order, not the table',
    async (planCacheMode) => {
      const { orgId, accountId } = await seedAccount();
      await seedDeposit(orgId, accountId, 1234);
      await prisma.$executeRaw`
        INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
        SELECT 'txn_decided_' || md5(random()::text), ${orgId}, 'test', ${accountId}, 'decided-' || g, 'deposit',
               CASE WHEN g % 4 = 0 THEN 'held' ELSE 'unmatched' END, 1000 + g, 'ﾔﾏﾀﾞ', '2026-11-21T00:00:00Z'
        FROM generate_series(1, 5000) g`;
      await prisma.$executeRaw`ANALYZE transactions`;

      const before = new Date(clock.now().getTime() - PENDING_GRACE_MS).toISOString();
      const plan = await preparedPlan(prisma, stuckPendingDeposits.text, `'${before}', 100`, planCacheMode);

      const nodes = planNodes(plan);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Seq Scan');
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
      expect(nodes.filter((n) => n['Relation Name'] === 'transactions').map((n) => [n['Node Type'], n['Index Name']])).toEqual([
        ['Index Scan', 'transactions_pending_idx'],
      ]);
    },
  );
});
