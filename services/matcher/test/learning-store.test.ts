import { MatcherCommand, newId, type MatchingRule } from '@pmatch/contracts';
import { type Database, type PrismaClient, type TransactionRow } from '@pmatch/db';
import { ManualClock } from '@pmatch/platform';
import { uniqueName } from '@pmatch/testkit';
import type { Redis } from 'ioredis';
import { findAmountCandidates } from '../src/data/candidates';
import { readDecisionInputs } from '../src/data/decision-inputs';
import { runCommand } from '../src/use-cases/commands';
import { depositDecider, type DecideDepositDeps } from '../src/use-cases/decide-deposit';
import { matcherDeps, orderRow, seedAccount, seedDeposit, seedOrder } from './support/seed';
import { testReadings } from './support/readings';
import { useMatcherStores } from './support/stores';

/** What a decision reads beyond the amount's orders, from the database, and what people teach it through commands. */

let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let deps: DecideDepositDeps;
const now = new Date('2026-11-22T10:00:00Z');

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  deps = { ...matcherDeps(database, redis, new ManualClock(now), await testReadings()), handOver: () => undefined };
});

async function inputsOf(deposit: TransactionRow) {
  const candidates = await findAmountCandidates(prisma, deposit.bankAccountId, deposit.amount, deposit.occurredAt);
  const [inputs] = await readDecisionInputs(database.sql, [{ deposit, candidates }]);
  return inputs!;
}

const decide = (deposit: TransactionRow) => depositDecider(deps)({ transaction_id: deposit.id, bank_account_id: deposit.bankAccountId }, uniqueName('m_'));

const enable = (orgId: string, matchingRules: MatchingRule[]) => prisma.setting.create({ data: { organisationId: orgId, mode: 'test', matchingRules } });

const command = (input: Record<string, unknown>) => runCommand(deps, MatcherCommand.parse(input) as never, uniqueName('cmd_'), () => true);

describe('the twins of a deposit', () => {
  test('when a deposit of the same account, amount and Tokyo day was stored before under the same name in another width, then it is the twin', async () => {
    const { orgId, accountId } = await seedAccount(prisma);
    const first = await seedDeposit(prisma, orgId, accountId, 5000n, { counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', occurredAt: new Date('2026-11-22T00:30:00Z') });
    const again = await seedDeposit(prisma, orgId, accountId, 5000n, { counterparty: 'ヤマダ　タロウ', occurredAt: new Date('2026-11-22T14:59:59Z') });
    const nextDay = await seedDeposit(prisma, orgId, accountId, 5000n, { counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', occurredAt: new Date('2026-11-22T15:00:00Z') });
    const otherName = await seedDeposit(prisma, orgId, accountId, 5000n, { counterparty: 'ﾔﾏﾀﾞ ﾊﾅｺ', occurredAt: new Date('2026-11-22T01:00:00Z') });
    const otherAmount = await seedDeposit(prisma, orgId, accountId, 5001n, { counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', occurredAt: new Date('2026-11-22T01:00:00Z') });

    expect((await inputsOf(first)).facts.duplicateOf).toBeUndefined();
    expect((await inputsOf(again)).facts.duplicateOf).toBe(first.id);
    // 2026-11-23 00:00 in Tokyo: another day.
    expect((await inputsOf(nextDay)).facts.duplicateOf).toBeUndefined();
    expect((await inputsOf(otherName)).facts.duplicateOf).toBeUndefined();
    expect((await inputsOf(otherAmount)).facts.duplicateOf).toBeUndefined();
  });

  test('when a twin arrives after its first was confirmed, then it is held as a possible duplicate and the other open order stays open', async () => {
    const { orgId, accountId } = await seedAccount(prisma);
    const paid = await seedOrder(prisma, orgId, accountId, 5000n, { payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
    const first = await seedDeposit(prisma, orgId, accountId, 5000n, { counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
    expect((await decide(first)).status).toBe('confirmed');
    const second = await seedOrder(prisma, orgId, accountId, 5000n, { payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ' });

    const twin = await decide(await seedDeposit(prisma, orgId, accountId, 5000n, { counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ' }));

    expect(twin).toMatchObject({ status: 'held', candidateOrderIds: [second.id], decision: { reason: 'possible_duplicate', duplicate_of: first.id } });
    expect((await prisma.order.findUniqueOrThrow({ where: { id: second.id } })).status).toBe('open');
    expect((await prisma.order.findUniqueOrThrow({ where: { id: paid.id } })).status).toBe('paid');
  });
});

describe('the open orders of nearby amounts', () => {
  test('when more open orders lie in the range than are read, then the nearest are read from both sides, nearest first, and no closed order, no order of the amount and none of another account', async () => {
    const { orgId, accountId } = await seedAccount(prisma);
    const other = await seedAccount(prisma);
    // 60 open orders on each side of 5,000, one yen apart: more than the 50 read.
    await prisma.order.createMany({
      data: Array.from({ length: 60 }, (_, i) => [orderRow(orgId, accountId, BigInt(5001 + i)), orderRow(orgId, accountId, BigInt(4999 - i))]).flat(),
    });
    await prisma.order.createMany({
      data: [
        orderRow(orgId, accountId, 5000n),
        orderRow(orgId, accountId, 5001n, { status: 'expired' }),
        orderRow(orgId, accountId, 4999n, { status: 'expired' }),
        orderRow(other.orgId, other.accountId, 5001n),
      ],
    });
    const deposit = await seedDeposit(prisma, orgId, accountId, 5000n);

    const near = (await inputsOf(deposit)).context.nearAmountOrders ?? [];

    const differences = near.map((order) => order.amount - 5000);
    expect(differences.map(Math.abs)).toEqual([...differences.map(Math.abs)].sort((a, b) => a - b));
    expect([...differences].sort((a, b) => a - b)).toEqual([...Array.from({ length: 25 }, (_, i) => i - 25), ...Array.from({ length: 25 }, (_, i) => i + 1)]);
    expect(near.every((order) => order.status === 'open')).toBe(true);
  });

  test('when a fee-short deposit has its order only above and a nearer order below, then both are read', async () => {
    const { orgId, accountId } = await seedAccount(prisma);
    const above = await seedOrder(prisma, orgId, accountId, 5000n, { payerName: 'ﾀﾅｶ' });
    const below = await seedOrder(prisma, orgId, accountId, 4600n, { payerName: 'ｽｽﾞｷ' });

    const near = (await inputsOf(await seedDeposit(prisma, orgId, accountId, 4670n))).context.nearAmountOrders ?? [];

    expect(near.map((order) => order.id)).toEqual([below.id, above.id]);
  });
});

describe('the order a transfer code names', () => {
  test('when the code is of an order of another amount, then it is read for the decision, and the deposit is held naming it', async () => {
    const { orgId, accountId } = await seedAccount(prisma);
    await enable(orgId, ['transfer_code']);
    const coded = await prisma.order.update({
      where: { id: (await seedOrder(prisma, orgId, accountId, 5000n, { payerName: '田中 花子' })).id },
      data: { transferCode: '4821737' },
    });
    const deposit = await seedDeposit(prisma, orgId, accountId, 4670n, { counterparty: '4821737 ﾀﾅｶ ﾊﾅｺ' });

    expect((await inputsOf(deposit)).context.codeOrder).toEqual({ id: coded.id, status: 'open', amount: 5000, payerName: '田中 花子' });
    const decided = await decide(deposit);

    expect(decided).toMatchObject({
      status: 'held',
      decision: { reason: 'transfer_code_amount_differs', transfer_code: { code: '4821737', order_id: coded.id } },
    });
    expect((decided.decision as { near_misses: unknown[] }).near_misses).toEqual([
      { order_id: coded.id, amount_difference: -330, likely: 'transfer_fee', fit: 'rule:transfer_code' },
    ]);
  });

  test('when the code is of an open order of the amount and the rule is on, then the order is paid by rule:transfer_code', async () => {
    const { orgId, accountId } = await seedAccount(prisma);
    await enable(orgId, ['transfer_code']);
    const coded = await prisma.order.update({
      where: { id: (await seedOrder(prisma, orgId, accountId, 5000n, { payerName: '田中 花子' })).id },
      data: { transferCode: '4821737' },
    });

    const decided = await decide(await seedDeposit(prisma, orgId, accountId, 5000n, { counterparty: '4821737 ﾀﾅｶ ﾊﾅｺ' }));

    expect(decided).toMatchObject({ status: 'confirmed', orderId: coded.id });
    expect((await prisma.order.findUniqueOrThrow({ where: { id: coded.id } })).payment).toMatchObject({ reason: 'rule:transfer_code', decided_by: 'auto' });
  });
});

describe('payers people teach', () => {
  test("when a person matches with remember_payer, then the name is remembered; the next month's deposit under it pays; reversing that payment forgets it", async () => {
    const { orgId, accountId } = await seedAccount(prisma);
    await enable(orgId, ['kana_width', 'learned_payer']);
    const first = await seedOrder(prisma, orgId, accountId, 3000n, { payerName: 'ヤマダ タロウ' });
    const mothers = await seedDeposit(prisma, orgId, accountId, 3000n, { counterparty: 'ﾔﾏﾀﾞ ﾊﾅｺ' });
    expect((await decide(mothers)).status).toBe('held');

    const scope = { organisation_id: orgId, mode: 'test' };
    await command({
      type: 'transaction.match',
      ...scope,
      transaction_id: mothers.id,
      order_id: first.id,
      decided_by: 'user:usr_1',
      trigger: 'dashboard',
      remember_payer: true,
    });

    const remembered = await prisma.payerAlias.findMany({ where: { bankAccountId: accountId } });
    expect(remembered).toEqual([
      expect.objectContaining({
        depositorName: 'ﾔﾏﾀﾞ ﾊﾅｺ',
        depositorKey: 'ヤマダハナコ',
        payerName: 'ヤマダ タロウ',
        payerKey: 'ヤマダタロウ',
        createdBy: 'user:usr_1',
      }),
    ]);
    const next = await seedOrder(prisma, orgId, accountId, 3000n, { payerName: 'ヤマダ タロウ', orderedAt: new Date('2026-11-22T15:10:00Z') });
    const nextMonth = await decide(
      await seedDeposit(prisma, orgId, accountId, 3000n, { counterparty: 'ﾔﾏﾀﾞ ﾊﾅｺ', occurredAt: new Date('2026-11-22T15:30:00Z') }),
    );
    expect(nextMonth).toMatchObject({ status: 'confirmed', orderId: next.id, decision: { reason: 'rule:learned_payer' } });

    await command({ type: 'order.reverse', ...scope, order_id: next.id, decided_by: 'user:usr_1', trigger: 'dashboard' });

    expect(await prisma.payerAlias.count({ where: { bankAccountId: accountId } })).toBe(0);
  });

  test('when a person matches without remember_payer, or under a name of digits only, then nothing is remembered', async () => {
    const { orgId, accountId } = await seedAccount(prisma);
    const scope = { organisation_id: orgId, mode: 'test' };
    const [a, b] = [await seedOrder(prisma, orgId, accountId, 3100n), await seedOrder(prisma, orgId, accountId, 3200n)];
    const [x, y] = [
      await seedDeposit(prisma, orgId, accountId, 3100n, { counterparty: 'ｽｽﾞｷ', status: 'held' }),
      await seedDeposit(prisma, orgId, accountId, 3200n, { counterparty: '1234567890', status: 'held' }),
    ];

    await command({ type: 'transaction.match', ...scope, transaction_id: x.id, order_id: a.id, trigger: 'api', decided_by: `api_key:${newId('apiKey')}` });
    await command({ type: 'transaction.match', ...scope, transaction_id: y.id, order_id: b.id, trigger: 'api', remember_payer: true });

    expect(await prisma.payerAlias.count({ where: { bankAccountId: accountId } })).toBe(0);
  });
});
