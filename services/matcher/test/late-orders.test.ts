import { orderRegistrationId } from '@pmatch/contracts';
import { type Database, type PrismaClient } from '@pmatch/db';
import { LockTimeoutError, ManualClock, RedisLock } from '@pmatch/platform';
import { PLAN_CACHE_MODES, notingQueries, planNodes, preparedPlan, rowsReadInTransaction, uniqueName } from '@pmatch/testkit';
import type { Redis } from 'ioredis';
import type { MatcherDeps } from '../src/use-cases/deps';
import { settleQueries, settleWithoutDeposit, type Waiting } from '../src/data/late-orders';
import { LATE_ORDERS_CONSUMER, lateOrderExaminer, type LateOrderExaminer } from '../src/use-cases/late-orders';
import { seedAccount as seedTestAccount, seedDeposit as seedTestDeposit, seedOrder as seedTestOrder, matcherDeps } from './support/seed';
import { testReadings } from './support/readings';
import { useMatcherStores } from './support/stores';

/**
 * The late-order examiner against the real database: the common case (no deposit waits for the
 * order) writes only its inbox row, and a deposit that does wait is decided once however often the
 * message comes.
 */

let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let deps: MatcherDeps;
let examine: LateOrderExaminer;
const clock = new ManualClock('2026-11-22T10:00:00Z');
const lockPrefix = uniqueName('pmatch-test:');

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  deps = matcherDeps(database, redis, clock, await testReadings(), lockPrefix);
  examine = lateOrderExaminer(deps);
});

const seedAccount = () => seedTestAccount(prisma);

const seedOrder = (orgId: string, accountId: string, amount: number, orderedAt: string, payerName = 'ﾔﾏﾀﾞ') =>
  seedTestOrder(prisma, orgId, accountId, BigInt(amount), { orderedAt: new Date(orderedAt), payerName });

const seedDeposit = (orgId: string, accountId: string, amount: number, occurredAt: string, status: string, counterparty = 'ﾔﾏﾀﾞ') =>
  seedTestDeposit(prisma, orgId, accountId, BigInt(amount), { occurredAt: new Date(occurredAt), status, counterparty });

const seedUnmatchedDeposit = (orgId: string, accountId: string, amount: number, occurredAt: string, counterparty?: string) =>
  seedDeposit(orgId, accountId, amount, occurredAt, 'unmatched', counterparty);

const written = async (orgId: string, messageId: string) => ({
  events: await prisma.event.count({ where: { organisationId: orgId } }),
  inbox: await prisma.inbox.count({ where: { messageId } }),
});

describe('the late-order examiner', () => {
  test('when no unmatched deposit fits the new order, then nothing is written but the inbox row, once however often the message comes', async () => {
    const { orgId, accountId } = await seedAccount();
    // Another amount, and the right amount but before the order was placed: neither fits.
    await seedUnmatchedDeposit(orgId, accountId, 999, '2026-11-22T09:00:00Z');
    await seedUnmatchedDeposit(orgId, accountId, 4000, '2026-11-20T09:00:00Z');
    const order = await seedOrder(orgId, accountId, 4000, '2026-11-21T00:00:00Z');

    const message = { order_id: order.id, bank_account_id: accountId };

    const recorded = [await examine([message]), await examine([message])];

    expect(recorded).toEqual([false, false]);
    expect(await written(orgId, `registered_${order.id}`)).toEqual({ events: 0, inbox: 1 });
    expect(await prisma.transaction.count({ where: { bankAccountId: accountId, status: 'unmatched' } })).toBe(2);
  });

  test('when an unmatched deposit fits, then it is held once with transaction.held, and the same message again changes nothing', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedUnmatchedDeposit(orgId, accountId, 4100, '2026-11-22T09:00:00Z');
    const order = await seedOrder(orgId, accountId, 4100, '2026-11-21T00:00:00Z');
    const message = { order_id: order.id, bank_account_id: accountId };

    const recorded = [await examine([message]), await examine([message])];

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

    await examine([{ order_id: order.id, bank_account_id: accountId }]);

    expect((await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).status).toBe('unmatched');
    expect(await written(orgId, `registered_${order.id}`)).toEqual({ events: 0, inbox: 1 });
  });

  test.each([
    [true, 'confirmed'],
    [false, 'held'],
  ])(
    'when the late order fits an unmatched deposit by a matching rule and auto-confirm is %s, then the deposit is %s with reason rule:corporate_abbreviation',
    async (autoConfirm, status) => {
      const { orgId, accountId } = await seedAccount();
      await prisma.setting.create({
        data: { organisationId: orgId, mode: 'test', autoConfirmLateOrders: autoConfirm, matchingRules: ['corporate_abbreviation'] },
      });
      const deposit = await seedUnmatchedDeposit(orgId, accountId, 4300, '2026-11-22T09:00:00Z', 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');
      const order = await seedOrder(orgId, accountId, 4300, '2026-11-21T00:00:00Z', '株式会社ヤマダショウジ');

      await examine([{ order_id: order.id, bank_account_id: accountId }]);

      const decided = await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } });
      const paid = await prisma.order.findUniqueOrThrow({ where: { id: order.id } });
      expect(decided.status).toBe(status);
      expect((decided.decision as { candidates: unknown[] }).candidates).toEqual([
        expect.objectContaining({ order_id: order.id, fit: 'rule:corporate_abbreviation', fit_rules: ['corporate_abbreviation'] }),
      ]);
      if (autoConfirm) {
        expect(paid).toMatchObject({ status: 'paid', payment: { transaction_id: deposit.id, reason: 'rule:corporate_abbreviation' } });
      } else {
        expect(decided).toMatchObject({ candidateOrderIds: [order.id], decision: { reason: 'late_order' } });
        expect(paid.status).toBe('open');
      }
    },
  );

  test('when the late order fits a deposit only under a rule the seller has not enabled, then the deposit is held with no_name_fits, not confirmed', async () => {
    const { orgId, accountId } = await seedAccount();
    await prisma.setting.create({
      data: { organisationId: orgId, mode: 'test', autoConfirmLateOrders: true, matchingRules: ['kana_width', 'decorated', 'truncated'] },
    });
    const deposit = await seedUnmatchedDeposit(orgId, accountId, 4400, '2026-11-22T09:00:00Z', 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');
    const order = await seedOrder(orgId, accountId, 4400, '2026-11-21T00:00:00Z', '株式会社ヤマダショウジ');

    await examine([{ order_id: order.id, bank_account_id: accountId }]);

    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toMatchObject({ status: 'held', decision: { reason: 'no_name_fits' } });
    expect((await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('open');
  });
});

describe('late-order messages out of scope', () => {
  test("when a message names an order with another bank account than the order's, then nothing is written for it, with or without a deposit waiting, and the rest of the message is examined", async () => {
    const mine = await seedAccount();
    const theirs = await seedAccount();
    const deposit = await seedUnmatchedDeposit(theirs.orgId, theirs.accountId, 6600, '2026-11-22T09:00:00Z');
    const waitedFor = await seedOrder(theirs.orgId, theirs.accountId, 6600, '2026-11-21T00:00:00Z');
    const nothingWaits = await seedOrder(theirs.orgId, theirs.accountId, 6700, '2026-11-21T00:00:00Z');
    const myDeposit = await seedUnmatchedDeposit(mine.orgId, mine.accountId, 6800, '2026-11-22T09:00:00Z');
    const myOrder = await seedOrder(mine.orgId, mine.accountId, 6800, '2026-11-21T00:00:00Z');
    const forged = [waitedFor, nothingWaits].map((o) => ({ order_id: o.id, bank_account_id: mine.accountId }));

    const recorded = await examine([...forged, { order_id: myOrder.id, bank_account_id: mine.accountId }]);

    expect(recorded).toBe(true);
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toMatchObject({ status: 'unmatched', candidateOrderIds: [] });
    expect(await written(theirs.orgId, orderRegistrationId(waitedFor.id))).toEqual({ events: 0, inbox: 0 });
    expect(await prisma.inbox.count({ where: { messageId: orderRegistrationId(nothingWaits.id) } })).toBe(0);
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: myDeposit.id } })).toMatchObject({ status: 'held', candidateOrderIds: [myOrder.id] });
  });
});

describe('late-order messages settled together', () => {
  test('when several messages are settled in one statement, then each is answered for its own order, and only the settled ones are claimed, once', async () => {
    const { orgId, accountId } = await seedAccount();
    await seedUnmatchedDeposit(orgId, accountId, 6100, '2026-11-22T09:00:00Z');
    const nothingWaits = await seedOrder(orgId, accountId, 6000, '2026-11-21T00:00:00Z');
    const depositWaits = await seedOrder(orgId, accountId, 6100, '2026-11-21T00:00:00Z');
    const closed = await seedOrder(orgId, accountId, 6100, '2026-11-21T00:00:00Z');
    await prisma.order.update({ where: { id: closed.id }, data: { status: 'canceled', closedAt: new Date('2026-11-22T09:30:00Z') } });
    const messages = [nothingWaits, depositWaits, closed, nothingWaits].map((o) => ({
      orderId: o.id,
      bankAccountId: accountId,
      messageId: `registered_${o.id}`,
    }));

    const settled = await settleWithoutDeposit(database.sql, 'pending or unmatched', LATE_ORDERS_CONSUMER, messages);

    expect(settled).toEqual(['settled', 'waited for', 'settled', 'settled']);
    const claimed = await prisma.inbox.findMany({ where: { consumer: LATE_ORDERS_CONSUMER, messageId: { in: messages.map((m) => m.messageId) } } });
    expect(claimed.map((row) => row.messageId).sort()).toEqual([`registered_${nothingWaits.id}`, `registered_${closed.id}`].sort());
  });

  test('when messages arrive while a check runs, then they are checked together in the next statement, and the one a deposit waits for is decided under the lock', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedUnmatchedDeposit(orgId, accountId, 6200, '2026-11-22T09:00:00Z');
    const waitedFor = await seedOrder(orgId, accountId, 6200, '2026-11-21T00:00:00Z');
    const others = await Promise.all(Array.from({ length: 9 }, (_, i) => seedOrder(orgId, accountId, 6300 + i, '2026-11-21T00:00:00Z')));
    const statementsRun: string[] = [];
    const countingExamine = lateOrderExaminer({ ...deps, database: { ...database, sql: notingQueries(database.sql, statementsRun) } });

    const recorded = await Promise.all([...others, waitedFor].map((o) => countingExamine([{ order_id: o.id, bank_account_id: accountId }])));

    expect(recorded).toEqual([...others.map(() => false), true]);
    expect(statementsRun).toEqual([
      settleQueries['pending or unmatched'].name, // the first message, at once
      settleQueries['pending or unmatched'].name, // the nine that came while it ran
      settleQueries.unmatched.name, // the one a deposit waits for, under the lock
    ]);
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toMatchObject({ status: 'held', candidateOrderIds: [waitedFor.id] });
    expect(
      await prisma.inbox.count({ where: { consumer: LATE_ORDERS_CONSUMER, messageId: { in: [...others, waitedFor].map((o) => `registered_${o.id}`) } } }),
    ).toBe(10);
  });
});

describe('late-order messages of several orders', () => {
  test('when one message registers several orders, then they are checked in one statement, the one a deposit waits for is decided under the lock, and the message coming again writes nothing more', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedUnmatchedDeposit(orgId, accountId, 6400, '2026-11-22T09:00:00Z');
    const others = await Promise.all(Array.from({ length: 4 }, (_, i) => seedOrder(orgId, accountId, 6500 + i, '2026-11-21T00:00:00Z')));
    const waitedFor = await seedOrder(orgId, accountId, 6400, '2026-11-21T00:00:00Z');
    const statementsRun: string[] = [];
    const countingExamine = lateOrderExaminer({ ...deps, database: { ...database, sql: notingQueries(database.sql, statementsRun) } });
    const message = [others[0]!, waitedFor, ...others.slice(1)].map((o) => ({ order_id: o.id, bank_account_id: accountId }));

    const recorded = [await countingExamine(message), await countingExamine(message)];

    expect(recorded).toEqual([true, false]);
    expect(statementsRun).toEqual([
      settleQueries['pending or unmatched'].name, // all five at once
      settleQueries.unmatched.name, // the one a deposit waits for, under the lock
      settleQueries['pending or unmatched'].name, // again: the deposit is held now, so all five are settled, and their claims are there already
    ]);
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toMatchObject({ status: 'held', candidateOrderIds: [waitedFor.id] });
    expect(await written(orgId, orderRegistrationId(waitedFor.id))).toEqual({ events: 1, inbox: 1 });
    expect(
      await prisma.inbox.count({ where: { consumer: LATE_ORDERS_CONSUMER, messageId: { in: [...others, waitedFor].map((o) => orderRegistrationId(o.id)) } } }),
    ).toBe(5);
  });
});

describe('the late-order examiner and the account lock', () => {
  /** Runs `work` while another matcher holds the account's lock; this one may wait for it only briefly. */
  async function whileLockHeldElsewhere<T>(accountId: string, work: (impatient: MatcherDeps) => Promise<T>): Promise<T> {
    const otherMatcher = new RedisLock(redis, lockPrefix);
    return otherMatcher.withLock(`account:${accountId}`, { ttlMs: 30_000, waitMs: 5_000 }, () => work({ ...deps, lockWaitMs: 100 }));
  }

  test('when no deposit of the amount is pending or unmatched, then the order is settled without waiting for the lock', async () => {
    const { orgId, accountId } = await seedAccount();
    // Decided deposits of the amount, and an unmatched one of another amount: none can wait for it.
    await seedDeposit(orgId, accountId, 5100, '2026-11-22T09:00:00Z', 'held');
    await seedDeposit(orgId, accountId, 5100, '2026-11-22T09:00:00Z', 'excluded');
    await seedUnmatchedDeposit(orgId, accountId, 5199, '2026-11-22T09:00:00Z');
    const order = await seedOrder(orgId, accountId, 5100, '2026-11-21T00:00:00Z');

    const recorded = await whileLockHeldElsewhere(accountId, (impatient) => lateOrderExaminer(impatient)([{ order_id: order.id, bank_account_id: accountId }]));

    expect(recorded).toBe(false);
    expect(await written(orgId, `registered_${order.id}`)).toEqual({ events: 0, inbox: 1 });
  });

  test.each(['pending', 'unmatched'])('when a deposit of the amount is %s, then the check waits for the lock and claims nothing without it', async (status) => {
    const { orgId, accountId } = await seedAccount();
    await seedDeposit(orgId, accountId, 5200, '2026-11-22T09:00:00Z', status);
    const order = await seedOrder(orgId, accountId, 5200, '2026-11-21T00:00:00Z');
    const message = { order_id: order.id, bank_account_id: accountId };

    await expect(whileLockHeldElsewhere(accountId, (impatient) => lateOrderExaminer(impatient)([message]))).rejects.toThrow(LockTimeoutError);

    expect(await written(orgId, `registered_${order.id}`)).toEqual({ events: 0, inbox: 0 });
  });

  test('when a deposit of the amount is still pending once the lock is taken, then the message is settled and the deposit left to its own decision', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 5300, '2026-11-22T09:00:00Z', 'pending');
    const order = await seedOrder(orgId, accountId, 5300, '2026-11-21T00:00:00Z');

    const recorded = await examine([{ order_id: order.id, bank_account_id: accountId }]);

    expect(recorded).toBe(false);
    expect(await written(orgId, `registered_${order.id}`)).toEqual({ events: 0, inbox: 1 });
    expect((await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).status).toBe('pending');
  });
});

describe("the late-order check's plan", () => {
  const cases = (['pending or unmatched', 'unmatched'] as Waiting[]).flatMap((waiting) => PLAN_CACHE_MODES.map((mode) => [waiting, mode] as const));

  // Run for every new order, on accounts whose decided deposits only grow: the read must go
  // through the partial index of waiting deposits, whatever plan the prepared statement settles on.
  test.each(cases)(
    'when the check for %s deposits is planned (%s), then it reads transactions through transactions_waiting_idx',
    async (waiting, planCacheMode) => {
      const { orgId, accountId } = await seedAccount();
      await prisma.$executeRaw`
      INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
      SELECT 'txn_' || md5(random()::text), ${orgId}, 'test', ${accountId}, md5(random()::text), 'deposit',
             (ARRAY['held', 'excluded', 'unmatched', 'pending'])[1 + g % 4], 5000 + g % 50, 'ﾔﾏﾀﾞ', '2026-11-22T09:00:00Z'
      FROM generate_series(1, 4000) g`;
      const order = await seedOrder(orgId, accountId, 5010, '2026-11-21T00:00:00Z');
      await prisma.$executeRaw`ANALYZE transactions`;

      const plan = await preparedPlan(
        prisma,
        settleQueries[waiting].text,
        `ARRAY['${order.id}'], ARRAY['${order.bankAccountId}'], ARRAY['plan-check'], '${LATE_ORDERS_CONSUMER}'`,
        planCacheMode,
        ['enable_seqscan = off', 'enable_bitmapscan = off'],
      );

      const transactionScans = planNodes(plan).filter((n) => n['Relation Name'] === 'transactions');
      expect(transactionScans.map((n) => [n['Node Type'], n['Index Name']])).toEqual([['Index Scan', 'transactions_waiting_idx']]);
    },
  );
});

describe('the late-order check under statistics that predate its orders', () => {
  const OPEN_ORDERS = 1_500;
  /** Checks in one transaction: enough to cover the custom plans and the generic one PostgreSQL may take after five. */
  const CHECKS = 7;

  test("when an account has many open orders the statistics do not know of, then each message's check reads its own order by key, not every open order", async () => {
    const { orgId, accountId } = await seedAccount();
    // Analysed while closed, then opened: the statistics say few orders are open, as after a quiet spell.
    await prisma.$executeRaw`
      INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token, closed_at)
      SELECT 'ord_bulk_' || g, ${orgId}, 'test', ${accountId}, 'canceled', 7000 + g, 'ﾔﾏﾀﾞ', 'bulk-' || g, 'i',
             '2026-11-21T00:00:00Z', '2026-12-05T00:00:00Z', 'tok_bulk_' || g, '2026-11-21T01:00:00Z'
      FROM generate_series(1, ${OPEN_ORDERS}) g`;
    await prisma.$executeRaw`ANALYZE orders`;
    await prisma.$executeRaw`UPDATE orders SET status = 'open', closed_at = NULL WHERE id LIKE 'ord_bulk_%'`;

    const read = await database.transaction(async (sql) => {
      // The counters may still hold reads of an earlier transaction on this connection (not yet flushed).
      const before = await rowsReadInTransaction(sql, 'orders');
      for (let check = 0; check < CHECKS; check += 1) {
        const messages = Array.from({ length: 10 }, (_, i) => {
          const orderId = `ord_bulk_${10 * check + i + 1}`;
          return { orderId, bankAccountId: accountId, messageId: orderRegistrationId(orderId) };
        });
        expect(await settleWithoutDeposit(sql, 'pending or unmatched', LATE_ORDERS_CONSUMER, messages)).toEqual(Array(10).fill('settled'));
      }
      return (await rowsReadInTransaction(sql, 'orders')) - before;
    });

    // Ten orders a check, each read by its key: far fewer than the account's 1,500 open orders.
    expect(read / CHECKS).toBeLessThan(OPEN_ORDERS / 10);
  });
});
