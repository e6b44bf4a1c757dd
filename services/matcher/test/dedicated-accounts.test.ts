import { MatcherCommand, newId, type MatchingRule } from '@pmatch/contracts';
import { type Database, type PrismaClient } from '@pmatch/db';
import { ManualClock } from '@pmatch/platform';
import { rejectionOf, uniqueName } from '@pmatch/testkit';
import type { Redis } from 'ioredis';
import { runCommand } from '../src/use-cases/commands';
import { depositDecider, type DecideDepositDeps } from '../src/use-cases/decide-deposit';
import { testReadings } from './support/readings';
import { matcherDeps, orderRow, seedDeposit } from './support/seed';
import { useMatcherStores } from './support/stores';

/** Deposits into dedicated transfer accounts: the account says whose money it is, the name need not. */

let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let deps: DecideDepositDeps;
const now = new Date('2026-11-22T10:00:00.123Z');

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  deps = { ...matcherDeps(database, redis, new ManualClock(now), await testReadings()), handOver: () => {} };
});

/** An organisation with `rules` enabled, a plain test account and one dedicated account (a buyer's when `customerReference`). */
async function seedDedicatedAccount(rules: MatchingRule[], customerReference: string | null = null) {
  const orgId = newId('organisation');
  const plainId = newId('bankAccount');
  const accountId = newId('bankAccount');
  await prisma.organisation.create({ data: { id: orgId, name: 'Shop', ownerEmail: 'o@example.com' } });
  const account = { organisationId: orgId, mode: 'test', bankCode: '9999', branchCode: '001', holderName: 'ｼﾖﾂﾌﾟ' };
  await prisma.bankAccount.createMany({
    data: [
      { ...account, id: plainId, accountNumber: '1234567' },
      { ...account, id: accountId, accountNumber: '1234568', dedicated: true },
    ],
  });
  await prisma.dedicatedAccount.create({ data: { bankAccountId: accountId, organisationId: orgId, mode: 'test' } });
  await prisma.setting.create({ data: { organisationId: orgId, mode: 'test', matchingRules: rules } });
  /** An order on the dedicated account, given it as the ops of orders-api do. */
  const order = async (amount: bigint, fields: { payerName?: string; status?: 'open' | 'expired' | 'paid' | 'canceled' } = {}) => {
    const status = fields.status ?? 'open';
    const paid = status === 'paid' || status === 'canceled';
    const row = {
      ...orderRow(orgId, accountId, amount, { payerName: fields.payerName ?? 'ヤマダ タロウ', status: status === 'expired' ? 'expired' : 'open' }),
      dedicated: true,
      customerReference,
      ...(paid
        ? {
            status,
            closedAt: new Date('2026-11-21T12:00:00Z'),
            ...(status === 'paid'
              ? {
                  payment: {
                    transaction_id: null,
                    amount: Number(amount),
                    counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
                    occurred_at: '2026-11-21T11:00:00.000Z',
                    matched_at: '2026-11-21T12:00:00.000Z',
                    decided_by: 'system',
                    trigger: 'automatic',
                    reason: 'exact',
                  },
                }
              : {}),
          }
        : {}),
    };
    await prisma.order.create({ data: row });
    await prisma.dedicatedAccount.update({
      where: { bankAccountId: accountId },
      data: { orderId: row.id, givenAt: row.orderedAt, customerReference },
    });
    return row.id;
  };
  const deposit = async (amount: bigint, counterparty: string) => {
    const stored = await seedDeposit(prisma, orgId, accountId, amount, { counterparty });
    return depositDecider(deps)({ transaction_id: stored.id, bank_account_id: accountId }, `m_${stored.id}`);
  };
  const reverse = (orderId: string) =>
    runCommand(
      deps,
      MatcherCommand.parse({
        type: 'order.reverse',
        organisation_id: orgId,
        mode: 'test',
        order_id: orderId,
        decided_by: 'user:usr_1',
        trigger: 'dashboard',
        reason: 'wrong buyer',
      }) as never,
      uniqueName('cmd_'),
      () => true,
    );
  return { orgId, plainId, accountId, order, deposit, reverse };
}

describe('deposits into dedicated accounts', () => {
  test('when a deposit whose name fits no rule goes to the account given to an order of its amount, then it pays that order under rule:dedicated_account', async () => {
    const { order, deposit } = await seedDedicatedAccount(['dedicated_account']);
    const orderId = await order(12800n, { payerName: 'ヤマダ タロウ' });

    const decided = await deposit(12800n, 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');

    expect(decided).toMatchObject({ status: 'confirmed', orderId });
    expect(decided.decision).toMatchObject({ reason: 'rule:dedicated_account', candidates: [{ order_id: orderId, not_chosen_because: null }] });
    expect(await prisma.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({ status: 'paid' });
  });

  test('when the seller has not enabled dedicated_account, then such a deposit is held as on any account', async () => {
    const { order, deposit } = await seedDedicatedAccount([]);
    const orderId = await order(12800n);

    const decided = await deposit(12800n, 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ');

    expect(decided).toMatchObject({ status: 'held', candidateOrderIds: [orderId] });
    expect(decided.decision).toMatchObject({ reason: 'no_name_fits' });
  });

  test("when a second payment goes into a paid order's account, then it is held as dedicated_account_order_closed with that order shown", async () => {
    const { order, deposit } = await seedDedicatedAccount(['dedicated_account']);
    const paidId = await order(5000n, { status: 'paid' });

    const decided = await deposit(5000n, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(decided).toMatchObject({ status: 'held', candidateOrderIds: [] });
    expect(decided.decision).toMatchObject({
      reason: 'dedicated_account_order_closed',
      dedicated_account: { order_id: paidId, order_status: 'paid', customer_reference: null },
    });
  });

  test("when a late payment goes into an expired order's account, then it is held with that order as its candidate, even with the name exact, and never paid automatically", async () => {
    const { order, deposit } = await seedDedicatedAccount(['dedicated_account', 'kana_width']);
    const expiredId = await order(5000n, { status: 'expired', payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ' });

    const decided = await deposit(5000n, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(decided).toMatchObject({ status: 'held', candidateOrderIds: [expiredId] });
    expect(decided.decision).toMatchObject({
      reason: 'dedicated_account_order_closed',
      candidates: [{ order_id: expiredId, not_chosen_because: 'dedicated_account_order_closed' }],
      dedicated_account: { order_id: expiredId, order_status: 'expired' },
    });
  });

  test('when a deposit of another amount goes into the account of an open order, then it is held as dedicated_account_amount_differs with that order shown as a near miss, and the order stays open', async () => {
    const { order, deposit } = await seedDedicatedAccount(['dedicated_account', 'kana_width']);
    const openId = await order(5000n, { payerName: 'ﾔﾏﾀﾞ ﾀﾛｳ' });

    const decided = await deposit(4670n, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(decided).toMatchObject({ status: 'held', candidateOrderIds: [] });
    expect(decided.decision).toMatchObject({
      reason: 'dedicated_account_amount_differs',
      dedicated_account: { order_id: openId, order_status: 'open', customer_reference: null },
      near_misses: [{ order_id: openId, amount_difference: -330, likely: 'transfer_fee' }],
    });
    expect(await prisma.order.findUniqueOrThrow({ where: { id: openId } })).toMatchObject({ status: 'open' });
  });

  test("when a returning buyer pays another amount than their open order's into their account, then it is held as dedicated_account_amount_differs naming their order", async () => {
    const { order, deposit } = await seedDedicatedAccount(['dedicated_account'], 'cust-9');
    await order(3000n, { status: 'paid' });
    const openId = await order(4000n);

    const decided = await deposit(4400n, 'ｽｽﾞｷ ﾊﾅｺ');

    expect(decided).toMatchObject({ status: 'held', candidateOrderIds: [] });
    expect(decided.decision).toMatchObject({
      reason: 'dedicated_account_amount_differs',
      dedicated_account: { order_id: openId, order_status: 'open', customer_reference: 'cust-9' },
    });
  });

  test('when a deposit goes into a dedicated account never given to an order, then it is held, not left unmatched for a later order to take', async () => {
    const { deposit } = await seedDedicatedAccount(['dedicated_account']);

    const decided = await deposit(5000n, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(decided).toMatchObject({ status: 'held', candidateOrderIds: [] });
    expect(decided.decision).toMatchObject({ reason: 'dedicated_account_order_closed', dedicated_account: { order_id: null, order_status: null } });
  });

  test('when a returning buyer has orders of several amounts on their account, then a deposit pays the one of its amount; two open of one amount hold it', async () => {
    const { order, deposit } = await seedDedicatedAccount(['dedicated_account'], 'cust-42');
    const first = await order(3000n);
    const second = await order(4500n);

    const paysFirst = await deposit(3000n, 'ｽｽﾞｷ ﾊﾅｺ');
    const twinA = await order(7000n);
    const twinB = await order(7000n);
    const ambiguous = await deposit(7000n, 'ｽｽﾞｷ ﾊﾅｺ');

    expect(paysFirst).toMatchObject({ status: 'confirmed', orderId: first });
    expect(paysFirst.decision).toMatchObject({ reason: 'rule:dedicated_account' });
    expect(await prisma.order.findUniqueOrThrow({ where: { id: second } })).toMatchObject({ status: 'open' });
    expect(ambiguous).toMatchObject({ status: 'held', candidateOrderIds: [twinA, twinB] });
    expect(ambiguous.decision).toMatchObject({ reason: 'several_orders_fit' });
  });

  test('when a payment is reversed after its account was given to another order, then it is refused while that order is open, and reopens the order once it closed', async () => {
    const { order, deposit, reverse } = await seedDedicatedAccount(['dedicated_account']);
    const first = await order(6000n);
    await deposit(6000n, 'ｻﾄｳ ｼﾞﾛｳ');
    const next = await order(8000n);

    const refused = await rejectionOf(() => reverse(first));
    await prisma.order.update({ where: { id: next }, data: { status: 'canceled', closedAt: now } });
    await reverse(first);

    expect(refused).toMatchObject({ code: 'order_not_open', message: expect.stringContaining(next) });
    expect(await prisma.order.findUniqueOrThrow({ where: { id: first } })).toMatchObject({ status: 'open', payment: null });
  });
});
