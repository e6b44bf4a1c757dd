import { LIMITS, type MatchingRule } from '@pmatch/contracts';
import {
  isUniqueViolation,
  orderObject,
  transactionObject,
  type Database,
  type LeasedMessage,
  type OutboxHandOver,
  type PrismaClient,
  type SqlOrPrisma,
  type TransactionRow,
} from '@pmatch/db';
import { ManualClock } from '@pmatch/platform';
import { PLAN_CACHE_MODES, notingQueries, planNodes, preparedPlan, statementWaitingForALock, uniqueName } from '@pmatch/testkit';
import type { Redis } from 'ioredis';
import { EXPIRED_CANDIDATE_LIMIT, OPEN_CANDIDATE_CAP, findAmountCandidates, readAmountCandidates } from '../src/data/candidates';
import { StaleDecisionError, confirmDeposit, payOrder, setDepositStatus } from '../src/data/conditional-writes';
import { writeDecisionsBatched, writeDecisionsBatchedQuery, writeDecisionsInBatches, type WriteDecisions } from '../src/data/decisions-batched';
import type { DecidedDeposit } from '../src/data/decision-rows';
import { readDeposit, readDepositsQuery, type PendingDeposit } from '../src/data/deposit-to-decide';
import type { Decision } from '../src/domain/decide';
import { readDecisionInputs } from '../src/data/decision-inputs';
import { decideUnderRules } from '../src/domain/decide-under-rules';
import { nameMatcher } from '../src/domain/names/matcher';
import { AUTOMATIC, decidedBy, depositPayment, outsidePayment } from '../src/domain/payments';
import { DEPOSITS_CONSUMER, depositDecider, type DecideDepositDeps } from '../src/use-cases/decide-deposit';
import {
  orderRow,
  seedAccount as seedTestAccount,
  seedDeposit as seedTestDeposit,
  seedOrder as seedTestOrder,
  type SeededOrderFields,
  matcherDeps,
} from './support/seed';
import { testReadings } from './support/readings';
import { useMatcherStores } from './support/stores';

let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let deps: DecideDepositDeps;
/** What the decisions handed to the outbox relay, in order: their announcements. */
const handedOver: LeasedMessage[] = [];
const handOver: OutboxHandOver = (messages) => void handedOver.push(...messages);
const now = new Date('2026-11-22T10:00:00.123Z');
const DEPOSIT_AT = new Date('2026-11-22T09:00:00.456Z');

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  deps = { ...matcherDeps(database, redis, new ManualClock(now), await testReadings()), handOver };
});

const seedAccount = (mode: 'test' | 'live' = 'test') => seedTestAccount(prisma, mode);

const seedOrder = (orgId: string, accountId: string, amount: bigint) => seedTestOrder(prisma, orgId, accountId, amount, { payerName: 'ヤマダ タロウ' });

const seedDeposit = (orgId: string, accountId: string, amount: bigint, fields: { direction?: string; status?: string; counterparty?: string } = {}) =>
  seedTestDeposit(prisma, orgId, accountId, amount, { counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', occurredAt: DEPOSIT_AT, ...fields });

type OrderFields = SeededOrderFields;

/** Orders in one statement, in seq order: a fixed-price shop's history is thousands of them. */
async function seedOrders(orgId: string, accountId: string, amount: bigint, count: number, fields: OrderFields = {}): Promise<string[]> {
  const rows = Array.from({ length: count }, () => orderRow(orgId, accountId, amount, { payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ', ...fields }));
  await prisma.order.createMany({ data: rows });
  return rows.map((row) => row.id);
}

/** A claim of a message not processed before. */
const freshMessage = () => ({ consumer: DEPOSITS_CONSUMER, messageId: uniqueName('msg-') });

/** Runs a statement in a DB transaction that stays open until the function returned is called. */
async function openTransaction(text: string, values: unknown[]) {
  let end!: () => void;
  const ending = new Promise<void>((resolve) => (end = resolve));
  let started!: () => void;
  const isStarted = new Promise<void>((resolve) => (started = resolve));
  const done = database.transaction(async (sql) => {
    await sql.count({ name: uniqueName('test.hold_'), text, parameters: [], bind: () => values });
    started();
    await ending;
  });
  await isStarted;
  return async () => {
    end();
    await done;
  };
}

/**
 * The write's parameters as SQL literals for one confirmation (EXECUTE takes no bind parameters),
 * of a deposit and an order that need not exist: `n` makes its ids and message id its own.
 */
function oneConfirmationLiterals(orgId: string, accountId: string, n: number): string {
  return [
    `ARRAY['txn_none_${n}']`,
    "ARRAY['1']",
    "ARRAY['pending']",
    "ARRAY['confirmed']",
    `ARRAY['ord_none_${n}']`,
    "ARRAY['2']",
    "ARRAY['open']",
    "ARRAY['{}'::jsonb]",
    "ARRAY['[]'::jsonb]",
    "ARRAY['{}'::jsonb]",
    'ARRAY[now()]',
    "ARRAY['c']",
    `ARRAY['m${n}']`,
    'ARRAY[now()]',
    `ARRAY['${orgId}']`,
    "ARRAY['test']",
    `ARRAY['${accountId}']`,
    'ARRAY[1, 1]',
    `ARRAY['evt_a${n}', 'evt_b${n}']`,
    "ARRAY['transaction.deposited', 'order.paid']",
    "ARRAY['{}'::jsonb, '{}'::jsonb]",
    `ARRAY['evt_a${n}']`,
    "ARRAY['events']",
    "ARRAY['event.recorded']",
    "ARRAY['{}'::jsonb]",
    "ARRAY['{}'::jsonb]",
  ].join(', ');
}

/** What a decision wrote for an organisation's deposit: its events, their announcements, and the message's inbox row. */
async function writtenFor(orgId: string, claim: { consumer: string; messageId: string }) {
  const events = await prisma.event.findMany({ where: { organisationId: orgId }, orderBy: { seq: 'asc' } });
  const announced = await prisma.outbox.findMany({ where: { payload: { path: ['organisation_id'], equals: orgId } } });
  const eventIdsOf = (payload: unknown) => (payload as { events: { event_id: string }[] }).events.map((e) => e.event_id);
  return {
    events: events.map((e) => e.type),
    announced: announced.map((m) => eventIdsOf(m.payload)),
    /** The announcements handed to the relay, which must be the ones inserted, leased for it. */
    handedOver: handedOver.filter((m) => (m.payload as { organisation_id: string }).organisation_id === orgId).map((m) => eventIdsOf(m.payload)),
    leased: announced.every((m) => m.leasedUntil !== null),
    eventIds: events.map((e) => e.id),
    inbox: await prisma.inbox.count({ where: { consumer: claim.consumer, messageId: claim.messageId } }),
  };
}

describe('readDeposit', () => {
  const read = (transactionId: string, message = freshMessage()) => readDeposit(database.sql, transactionId, message);

  test('when the message was processed before, then there is nothing to decide and the deposit is read as it stands', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 100n);
    const message = freshMessage();
    await prisma.inbox.create({ data: { consumer: message.consumer, messageId: message.messageId } });

    const again = await read(deposit.id, message);

    expect(again.pending).toBeUndefined();
    expect(again.transaction).toEqual(deposit);
    expect((await read(deposit.id)).pending?.deposit).toEqual(deposit);
  });

  test('when it reads a pending deposit, then it writes nothing and locks nothing', async () => {
    const { orgId, accountId } = await seedAccount();
    const deposit = await seedDeposit(orgId, accountId, 100n);
    const message = freshMessage();

    expect((await read(deposit.id, message)).pending?.deposit.id).toBe(deposit.id);

    expect(await prisma.inbox.count({ where: { consumer: message.consumer, messageId: message.messageId } })).toBe(0);
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toEqual(deposit);
    await prisma.$transaction((tx) => tx.$executeRaw`SELECT id FROM transactions WHERE id = ${deposit.id} FOR UPDATE NOWAIT`);
  });

  test('when the deposit is pending, then it reads the row exactly as Prisma reads it, every column, with its version', async () => {
    const { orgId, accountId } = await seedAccount();
    const seeded = await seedDeposit(orgId, accountId, 9_999_999_999n);
    // The columns a pending deposit may fill, filled (order_id only with confirmed), so that each one's mapping from its SQL name is checked.
    await prisma.transaction.update({
      where: { id: seeded.id },
      data: { candidateOrderIds: ['ord_a', 'ord_b'], decision: { reason: 'several', candidates: [{ order_id: 'ord_a' }] }, decidedAt: now },
    });
    const expected = await prisma.transaction.findUniqueOrThrow({ where: { id: seeded.id } });
    const [row] = await prisma.$queryRaw<{ xmin: string }[]>`SELECT xmin::text AS xmin FROM transactions WHERE id = ${seeded.id}`;

    const { transaction, pending } = await read(seeded.id);

    expect(transaction).toEqual(expected);
    expect(pending?.deposit).toEqual(expected);
    expect(pending?.version).toBe(row?.xmin);
    expect(typeof pending?.deposit.amount).toBe('bigint');
    expect(typeof pending?.deposit.seq).toBe('bigint');
  });

  test('when the deposit is pending, then its amount candidates are read with it, as findAmountCandidates reads them: whole rows with their versions', async () => {
    const { orgId, accountId } = await seedAccount();
    const open = await seedOrders(orgId, accountId, 720n, 2);
    const [expired] = await seedOrders(orgId, accountId, 720n, 1, { status: 'expired' });
    await seedOrders(orgId, accountId, 720n, 1, { orderedAt: new Date(DEPOSIT_AT.getTime() + 1) });
    await seedOrders(orgId, accountId, 721n, 1);
    const elsewhere = await seedAccount();
    await seedOrders(elsewhere.orgId, elsewhere.accountId, 720n, 1);
    const deposit = await seedDeposit(orgId, accountId, 720n);
    const alone = await seedDeposit(orgId, accountId, 722n);

    const [{ pending }, { pending: pendingAlone }] = [await read(deposit.id), await read(alone.id)];
    const found = await findAmountCandidates(database.sql, accountId, 720n, DEPOSIT_AT);

    expect(pending?.candidates.orders.map((o) => o.id)).toEqual([...open, expired]);
    expect(pending?.candidates).toEqual(found);
    const versions = await prisma.$queryRaw<{ id: string; xmin: string }[]>`SELECT id, xmin::text AS xmin FROM orders WHERE id = ANY(${[...open, expired!]})`;
    expect(versions).toHaveLength(3);
    for (const { id, xmin } of versions) {
      const { version, ...row } = pending!.candidates.rows.get(id)!;
      expect(row).toEqual(await prisma.order.findUniqueOrThrow({ where: { id } }));
      expect(version).toBe(xmin);
    }
    expect(pendingAlone?.deposit.id).toBe(alone.id);
    expect(pendingAlone?.candidates).toEqual({ orders: [], read: { allOpenOrdersRead: true }, rows: new Map() });
  });

  test('when the deposit is decided or is a withdrawal, then there is nothing to decide; a transaction that does not exist is an error', async () => {
    const { orgId, accountId } = await seedAccount();
    const decided = await seedDeposit(orgId, accountId, 100n, { status: 'unmatched' });
    const withdrawal = await seedDeposit(orgId, accountId, 100n, { direction: 'withdrawal', status: 'unmatched' });

    expect(await read(decided.id)).toEqual({ transaction: decided });
    expect(await read(withdrawal.id)).toEqual({ transaction: withdrawal });
    await expect(read('txn_missing')).rejects.toThrow('transaction txn_missing does not exist');
  });

  test('when the seller enabled matching rules, then the deposit is read with them and its names are compared under them; without settings only exact names fit and others come back as outside the rules', async () => {
    const withRules = await seedAccount();
    await prisma.setting.create({ data: { organisationId: withRules.orgId, mode: 'test', matchingRules: ['kana_width', 'rule_of_a_later_version'] } });
    await prisma.setting.create({ data: { organisationId: withRules.orgId, mode: 'live', matchingRules: [] } });
    const a = await seedDeposit(withRules.orgId, withRules.accountId, 100n);
    const withoutSettings = await seedAccount();
    const b = await seedDeposit(withoutSettings.orgId, withoutSettings.accountId, 100n);

    const [readA, readB] = [(await read(a.id)).pending, (await read(b.id)).pending];

    expect(readA?.rules).toEqual(['kana_width']);
    expect(readB?.rules).toEqual([]);
    const fitsUnder = (rules: MatchingRule[]) => nameMatcher(rules);
    expect(fitsUnder(readA!.rules)('ﾔﾏﾀﾞ ﾀﾛｳ', 'ヤマダ タロウ')).toEqual({ reason: 'rule:kana_width', rank: 1, applied: ['kana_width'] });
    expect(fitsUnder(readB!.rules)('ﾔﾏﾀﾞ ﾀﾛｳ', 'ヤマダ タロウ')).toMatchObject({ reason: 'rule:kana_width', outsideRules: true });
    expect(fitsUnder(readB!.rules)('ヤマダ タロウ', 'ヤマダ タロウ')).toEqual(expect.objectContaining({ reason: 'exact' }));
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

    const paid = await inTransaction((tx) =>
      payOrder(tx, order.id, { statuses: ['open'], bankAccountId: accountId, amount: 500n, payerName: 'ヤマダ タロウ' }, payment, 'paid', now),
    );

    expect(paid).toEqual(await prisma.order.findUniqueOrThrow({ where: { id: order.id } }));
    expect(paid).toMatchObject({ status: 'paid', closedAt: now, updatedAt: now, payment: JSON.parse(JSON.stringify(payment)) });
  });

  test('when the caller relied on the status alone, then the order is paid whatever its account, amount and payer name', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const payment = outsidePayment({ amount: 500, payerName: order.payerName }, now, now, decidedBy({ decided_by: 'api_key:key_test', trigger: 'api' }));

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

    const held = await inTransaction((tx) =>
      setDepositStatus(tx, deposit.id, ['pending'], { status: 'held', orderId: null, candidateOrderIds: ['ord_a'] }, now),
    );

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

/** Writes one decision, with whichever others are written at the time. */
/** The decision the matcher makes of a pending deposit as read: its context read too, under its seller's rules. */
async function decided(pending: PendingDeposit): Promise<Decision> {
  const [inputs] = await readDecisionInputs(database.sql, [pending]);
  return decideUnderRules(pending.rules, deps.readings, inputs!, pending.candidates, now);
}

const writeOne =
  (writeDecisions: WriteDecisions) =>
  (decided: DecidedDeposit): Promise<TransactionRow> =>
    writeDecisions([decided])[0]!;

describe('writeDecisionsInBatches: a decision written onto the rows it read, or not at all', () => {
  const startedAt = new Date(now.getTime() - 5);
  const ctx = { publicBaseUrl: 'http://localhost:3000', now, startedAt };

  /** Reads and decides, lets `change` commit (the read holds no lock), then writes the decision. */
  async function decideAcrossChange(depositId: string, change: () => Promise<unknown>, message = freshMessage()) {
    const { pending } = await readDeposit(database.sql, depositId, message);
    const decision = await decided(pending!);
    expect(decision.outcome).toBe('confirmed');
    await change();
    return writeOne(writeDecisionsInBatches(database.sql, handOver))({ pending: pending!, decision, claim: message, ctx });
  }

  async function expectNothingWritten(orgId: string, order: { id: string }, deposit: { id: string }, message: { consumer: string; messageId: string }) {
    expect(await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({ status: 'open', payment: null, closedAt: null });
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).toMatchObject({ status: 'pending', orderId: null, decision: null });
    expect(await writtenFor(orgId, message)).toEqual({ events: [], announced: [], handedOver: [], leased: true, eventIds: [], inbox: 0 });
  }

  test.each([
    ["the order's amount", (order: string) => prisma.$executeRaw`UPDATE orders SET amount = 999 WHERE id = ${order}`],
    ["the order's payer name", (order: string) => prisma.$executeRaw`UPDATE orders SET payer_name = 'スズキ イチロウ' WHERE id = ${order}`],
    // Not a column the decision relies on, but one order.paid would show as it was read.
    ["the order's metadata", (order: string) => prisma.$executeRaw`UPDATE orders SET metadata = '{"note": "changed"}' WHERE id = ${order}`],
    [
      'the deposit, in a column the decision does not read',
      (_order: string, deposit: string) => prisma.$executeRaw`UPDATE transactions SET updated_at = now() WHERE id = ${deposit}`,
    ],
  ])('when %s changes between the read and the write, then the write is refused as stale and writes nothing', async (_what, change) => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n, { counterparty: 'ヤマダ タロウ' });
    const message = freshMessage();

    await expect(decideAcrossChange(deposit.id, () => change(order.id, deposit.id), message)).rejects.toThrow(
      new StaleDecisionError(`deposit ${deposit.id} or order ${order.id} changed since the decision read it`),
    );

    await expectNothingWritten(orgId, order, deposit, message);
  });

  test('when the deposit changes while the write waits for its row, after the order was paid in the same statement, then the statement fails whole', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n, { counterparty: 'ヤマダ タロウ' });
    const message = freshMessage();
    const { pending } = await readDeposit(database.sql, deposit.id, message);
    const decision = await decided(pending!);
    // Holds the deposit's row, changed but not committed: the write's snapshot still sees it as read.
    const commitChange = await openTransaction('UPDATE transactions SET updated_at = now() WHERE id = $1', [deposit.id]);

    const writing = writeOne(writeDecisionsInBatches(database.sql, handOver))({ pending: pending!, decision, claim: message, ctx });
    writing.catch(() => undefined);
    // The write has paid the order and waits for the deposit's row.
    await statementWaitingForALock(prisma, 'WITH items AS%');
    await commitChange();

    await expect(writing).rejects.toThrow(new StaleDecisionError(`deposit ${deposit.id} or order ${order.id} changed since the decision read it`));
    expect(await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({ status: 'open', payment: null, closedAt: null });
    expect(await prisma.event.count({ where: { organisationId: orgId } })).toBe(0);
    expect(await prisma.inbox.count({ where: { consumer: message.consumer, messageId: message.messageId } })).toBe(0);
  });

  test.each([
    ['confirmed', 'ヤマダ タロウ', 1, ['transaction.deposited', 'order.paid']],
    ['held', 'ヤマダ タロウ', 2, ['transaction.deposited', 'transaction.held']],
    ['unmatched', 'ヤマダ タロウ', 0, ['transaction.deposited']],
  ] as const)(
    'when a deposit is %s, then its events carry the rows as stored, and the message is marked processed with them',
    async (outcome, counterparty, orders, types) => {
      const { orgId, accountId } = await seedAccount();
      const seeded = await Promise.all(Array.from({ length: orders }, () => seedOrder(orgId, accountId, 500n)));
      // Metadata, so that order.paid's copy of a JSON column is checked too.
      for (const order of seeded) await prisma.order.update({ where: { id: order.id }, data: { metadata: { cart: 'c-1', lines: [1, 2] } } });
      const deposit = await seedDeposit(orgId, accountId, 500n, { counterparty });
      const message = freshMessage();

      const { pending } = await readDeposit(database.sql, deposit.id, message);
      const decision = await decided(pending!);
      const written = await writeOne(writeDecisionsInBatches(database.sql, handOver))({ pending: pending!, decision, claim: message, ctx });

      const stored = await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } });
      expect(written).toEqual(stored);
      expect(stored.status).toBe(outcome);
      const events = await prisma.event.findMany({ where: { organisationId: orgId }, orderBy: { seq: 'asc' } });
      expect(events.map((e) => e.type)).toEqual(types);
      expect(events[0]!.data).toEqual(JSON.parse(JSON.stringify({ object: transactionObject(stored) })));
      if (outcome === 'confirmed') {
        const paid = await prisma.order.findUniqueOrThrow({ where: { id: seeded[0]!.id } });
        expect(paid).toMatchObject({ status: 'paid', closedAt: now, updatedAt: now });
        expect(events[1]!.data).toEqual(JSON.parse(JSON.stringify({ object: orderObject(paid, ctx.publicBaseUrl) })));
      }
      if (outcome === 'held') {
        expect(events[1]!.data).toEqual(JSON.parse(JSON.stringify({ object: transactionObject(stored), candidate_order_ids: stored.candidateOrderIds })));
      }
      // Processed when the decision began: the bench's stages split the time from a deposit's storing to its decision there.
      expect(await prisma.inbox.findMany({ where: { consumer: message.consumer, messageId: message.messageId } })).toEqual([
        expect.objectContaining({ processedAt: startedAt }),
      ]);
      const announced = await prisma.outbox.findMany({ where: { payload: { path: ['organisation_id'], equals: orgId } } });
      expect(announced.map((m) => (m.payload as { events: { event_id: string }[] }).events.map((e) => e.event_id))).toEqual([events.map((e) => e.id)]);
    },
  );

  test('when the decision is made again after the change, then the changed order is not paid', async () => {
    const { orgId, accountId } = await seedAccount();
    const order = await seedOrder(orgId, accountId, 500n);
    const deposit = await seedDeposit(orgId, accountId, 500n, { counterparty: 'ヤマダ タロウ' });
    await expect(decideAcrossChange(deposit.id, () => prisma.$executeRaw`UPDATE orders SET amount = 999 WHERE id = ${order.id}`)).rejects.toThrow(
      StaleDecisionError,
    );

    const again = await depositDecider(deps)({ transaction_id: deposit.id, bank_account_id: accountId }, `m_${deposit.id}`);

    expect(again.status).toBe('unmatched');
    expect((await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('open');
  });
});

describe('writeDecisionsBatched: the decisions of several accounts in one statement', () => {
  const startedAt = new Date(now.getTime() - 5);
  const ctx = { publicBaseUrl: 'http://localhost:3000', now, startedAt };

  /** A deposit of its own account and organisation, read and decided, ready to write. */
  async function decidedDeposit(outcome: 'confirmed' | 'held' | 'unmatched') {
    const { orgId, accountId } = await seedAccount();
    const orders = await Promise.all(Array.from({ length: { confirmed: 1, held: 2, unmatched: 0 }[outcome] }, () => seedOrder(orgId, accountId, 700n)));
    const deposit = await seedDeposit(orgId, accountId, 700n, { counterparty: 'ヤマダ タロウ' });
    const claim = freshMessage();
    const { pending } = await readDeposit(database.sql, deposit.id, claim);
    const decision = await decided(pending!);
    expect(decision.outcome).toBe(outcome);
    return { orgId, orders, deposit, claim, decided: { pending: pending!, decision, claim, ctx } };
  }

  test('when decisions of several accounts are written together, then each deposit comes back as stored, in the order given, with its own events, announcement and inbox row', async () => {
    const decisions = [await decidedDeposit('held'), await decidedDeposit('confirmed'), await decidedDeposit('unmatched')];

    const written = await writeDecisionsBatched(
      database.sql,
      decisions.map((d) => d.decided),
      handOver,
    );

    expect(written).toEqual(await Promise.all(decisions.map((d) => prisma.transaction.findUniqueOrThrow({ where: { id: d.deposit.id } }))));
    expect(written.map((w) => w?.status)).toEqual(['held', 'confirmed', 'unmatched']);
    expect(await prisma.order.findUniqueOrThrow({ where: { id: decisions[1]!.orders[0]!.id } })).toMatchObject({ status: 'paid', closedAt: now });
    const types = [['transaction.deposited', 'transaction.held'], ['transaction.deposited', 'order.paid'], ['transaction.deposited']];
    for (const [i, d] of decisions.entries()) {
      const { events, announced, handedOver: handed, leased, eventIds, inbox } = await writtenFor(d.orgId, d.claim);
      expect({ events, announced, handed, leased, inbox }).toEqual({ events: types[i], announced: [eventIds], handed: [eventIds], leased: true, inbox: 1 });
    }
  });

  test('when one decision of a batch is stale, then it writes nothing and comes back null, and the others are written', async () => {
    const stale = await decidedDeposit('confirmed');
    const fresh = await decidedDeposit('confirmed');
    await prisma.$executeRaw`UPDATE orders SET amount = 999 WHERE id = ${stale.orders[0]!.id}`;

    const written = await writeDecisionsBatched(database.sql, [stale.decided, fresh.decided], handOver);

    expect(written.map((w) => w?.status ?? null)).toEqual([null, 'confirmed']);
    expect(await prisma.transaction.findUniqueOrThrow({ where: { id: stale.deposit.id } })).toMatchObject({ status: 'pending', decision: null });
    expect(await writtenFor(stale.orgId, stale.claim)).toMatchObject({ events: [], announced: [], handedOver: [], inbox: 0 });
    const freshWritten = await writtenFor(fresh.orgId, fresh.claim);
    expect(freshWritten).toMatchObject({ events: ['transaction.deposited', 'order.paid'], handedOver: [freshWritten.eventIds], inbox: 1 });
  });

  test('when a decision would pay an order that was not open when read, then the database refuses it as stale', async () => {
    const { orgId, accountId } = await seedAccount();
    const [expired] = await seedOrders(orgId, accountId, 730n, 1, { status: 'expired', payerName: 'ヤマダ タロウ' });
    const deposit = await seedDeposit(orgId, accountId, 730n, { counterparty: 'ヤマダ タロウ' });
    const claim = freshMessage();
    const { pending } = await readDeposit(database.sql, deposit.id, claim);
    const held = await decided(pending!);
    // decide() holds such a deposit (expired_order_fits); a decision that confirmed it anyway must not be written.
    const confirmed = { outcome: 'confirmed' as const, orderId: expired!, payerName: 'ヤマダ タロウ', reason: 'exact', explanation: held.explanation };

    expect(await writeDecisionsBatched(database.sql, [{ pending: pending!, decision: confirmed, claim, ctx }], handOver)).toEqual([null]);
    expect(await prisma.order.findUniqueOrThrow({ where: { id: expired! } })).toMatchObject({ status: 'expired', payment: null });
    expect(await writtenFor(orgId, claim)).toMatchObject({ events: [], inbox: 0 });
  });

  test('when decisions are made while one is written, then they go together in the next statement, and one that fails it is written again alone, failing only itself', async () => {
    const first = await decidedDeposit('unmatched');
    const failing = await decidedDeposit('confirmed');
    const other = await decidedDeposit('held');
    const statements: string[] = [];
    const write = writeOne(writeDecisionsInBatches(notingQueries(database.sql, statements), handOver));
    // The first write waits for its deposit's row, so the next two are made while it runs.
    const releaseFirst = await openTransaction('SELECT FROM transactions WHERE id = $1 FOR UPDATE', [first.deposit.id]);
    const writingFirst = write(first.decided);
    await statementWaitingForALock(prisma, 'WITH items AS%');
    // The batch of the next two pays the failing decision's order, then waits for its deposit, which changes.
    const changeFailing = await openTransaction('UPDATE transactions SET updated_at = now() WHERE id = $1', [failing.deposit.id]);
    const writingFailing = write(failing.decided);
    writingFailing.catch(() => undefined);
    const writingOther = write(other.decided);
    await releaseFirst();
    expect((await writingFirst).status).toBe('unmatched');
    await statementWaitingForALock(prisma, 'WITH items AS%');
    await changeFailing();

    await expect(writingFailing).rejects.toThrow(
      new StaleDecisionError(`deposit ${failing.deposit.id} or order ${failing.orders[0]!.id} changed since the decision read it`),
    );
    expect((await writingOther).status).toBe('held');
    // The first alone; the two together, failed whole; then each alone.
    expect(statements).toEqual(Array.from({ length: 4 }, () => writeDecisionsBatchedQuery.name));
    expect(await prisma.order.findUniqueOrThrow({ where: { id: failing.orders[0]!.id } })).toMatchObject({ status: 'open', payment: null });
    expect(await writtenFor(failing.orgId, failing.claim)).toMatchObject({ events: [], inbox: 0 });
    expect(await writtenFor(other.orgId, other.claim)).toMatchObject({ events: ['transaction.deposited', 'transaction.held'], inbox: 1 });
  });

  // A batch of one, the usual case at low load, must not cost a planning of this long statement
  // every time (1.3 ms of CPU, measured). PostgreSQL keeps planning a prepared statement for its
  // values while those plans look cheaper than its generic one, as they could for arrays of one.
  test('when the write is executed for one decision after another, then PostgreSQL settles on its generic plan', async () => {
    const { orgId, accountId } = await seedAccount();

    const plans = await prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`PREPARE one_by_one AS ${writeDecisionsBatchedQuery.text}`);
      // Rows that do not exist: each execution is planned and run, and writes nothing.
      for (let n = 1; n <= 10; n++) await tx.$queryRawUnsafe(`EXECUTE one_by_one(${oneConfirmationLiterals(orgId, accountId, n)})`);
      const [counts] = await tx.$queryRawUnsafe<{ generic: bigint; custom: bigint }[]>(
        "SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements WHERE name = 'one_by_one'",
      );
      await tx.$executeRawUnsafe('DEALLOCATE one_by_one');
      return counts!;
    });

    expect({ generic: Number(plans.generic), custom: Number(plans.custom) }).toEqual({ generic: 5, custom: 5 });
  });

  // Two rows of each table per decision, out of every order and deposit there is: whatever plan
  // the prepared statement settles on, they must be found by their keys. No deposit is pending
  // here, as when a quiet matcher prepares the statement: a plan through the near-empty index of
  // pending deposits would read the whole backlog for each decision under a rush.
  test.each(PLAN_CACHE_MODES)('when the write is planned (%s), then it finds orders and deposits by their primary keys', async (planCacheMode) => {
    const { orgId, accountId } = await seedAccount();
    await seedOrders(orgId, accountId, 720n, 3000);
    await prisma.$executeRaw`
      INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
      SELECT 'txn_' || md5(random()::text), ${orgId}, 'test', ${accountId}, md5(random()::text), 'deposit', 'unmatched', 720, 'ﾔﾏﾀﾞ', ${DEPOSIT_AT}
      FROM generate_series(1, 3000)`;
    await prisma.$executeRaw`ANALYZE orders`;
    await prisma.$executeRaw`ANALYZE transactions`;

    const plan = await preparedPlan(prisma, writeDecisionsBatchedQuery.text, oneConfirmationLiterals(orgId, accountId, 1), planCacheMode);

    const scans = planNodes(plan).filter((n) => String(n['Node Type']).endsWith('Scan') && ['orders', 'transactions'].includes(String(n['Relation Name'])));
    expect(scans.length).toBeGreaterThanOrEqual(3);
    expect(new Set(scans.map((n) => `${n['Node Type']} ${n['Index Name']}`))).toEqual(new Set(['Index Scan orders_pkey', 'Index Scan transactions_pkey']));
  });
});

describe('confirmDeposit (commands and late orders)', () => {
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
});

describe('findAmountCandidates', () => {
  test('when orders were placed before and after the deposit, then only those at or before it are read', async () => {
    const { orgId, accountId } = await seedAccount();
    const [before] = await seedOrders(orgId, accountId, 700n, 1, { orderedAt: new Date(DEPOSIT_AT.getTime() - 1) });
    const [atTheSameTime] = await seedOrders(orgId, accountId, 700n, 1, { orderedAt: DEPOSIT_AT });
    await seedOrders(orgId, accountId, 700n, 1, { orderedAt: new Date(DEPOSIT_AT.getTime() + 1) });
    await seedOrders(orgId, accountId, 700n, 1, { orderedAt: new Date(DEPOSIT_AT.getTime() + 1), status: 'expired' });

    const read = await database.transaction((sql) => findAmountCandidates(sql, accountId, 700n, DEPOSIT_AT));

    expect(read).toMatchObject({
      orders: [expect.objectContaining({ id: before }), expect.objectContaining({ id: atTheSameTime })],
      read: { allOpenOrdersRead: true },
    });
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

    const decided = await depositDecider(deps)({ transaction_id: deposit.id, bank_account_id: accountId }, `m_${deposit.id}`);

    expect(decided).toMatchObject({ status: 'held', candidateOrderIds: [oldOpen, newOpen] });
  });

  test('when more open orders have the amount than the cap, then the deposit is held as too_many_candidates with at most 100 listed', async () => {
    const { orgId, accountId } = await seedAccount();
    await seedOrders(orgId, accountId, 900n, OPEN_CANDIDATE_CAP + 1);
    const deposit = await seedDeposit(orgId, accountId, 900n);

    const read = await database.transaction((sql) => findAmountCandidates(sql, accountId, 900n, DEPOSIT_AT));
    const decided = await depositDecider(deps)({ transaction_id: deposit.id, bank_account_id: accountId }, `m_${deposit.id}`);

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
    ['readAmountCandidates', readAmountCandidates.text, (accountId: string, _depositId: string) => `'${accountId}', 950, '${DEPOSIT_AT.toISOString()}'`],
    [
      'readDepositsQuery',
      readDepositsQuery.text,
      (_accountId: string, depositId: string) =>
        `ARRAY['${depositId}', 'txn_missing'], ARRAY['${DEPOSITS_CONSUMER}', '${DEPOSITS_CONSUMER}'], ARRAY['plan-check', 'plan-check-2']`,
    ],
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
      const plan = await preparedPlan(prisma, text, values(accountId, deposit.id), planCacheMode, [
        'enable_seqscan = off',
        'enable_bitmapscan = off',
        'enable_sort = off',
      ]);

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
