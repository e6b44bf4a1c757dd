import type { PrismaClient } from '@pmatch/db';
import { ManualClock } from '@pmatch/platform';
import { confirmPreviewed, previewRules } from '../src/use-cases/rule-preview';
import type { MatcherDeps } from '../src/use-cases/deps';
import { testReadings } from './support/readings';
import { matcherDeps, seedAccount, seedDeposit, seedOrder } from './support/seed';
import { useMatcherStores } from './support/stores';

/** A rule preview and its confirmation: what deciding the held deposits again would confirm, never one order for two deposits. */

let prisma: PrismaClient;
let deps: MatcherDeps;

useMatcherStores(async (stores) => {
  prisma = stores.prisma;
  deps = matcherDeps(stores.database, stores.redis, new ManualClock('2026-11-22T10:00:00Z'), await testReadings());
});

/** Two held deposits, a day apart, that each fit one open order alone; and a held deposit with an order of its own. */
async function twoForOneAndOneAlone() {
  const { orgId, accountId } = await seedAccount(prisma);
  const shared = await seedOrder(prisma, orgId, accountId, 3000n, { payerName: 'ﾌﾀﾘ ﾊﾅｺ' });
  const own = await seedOrder(prisma, orgId, accountId, 4000n, { payerName: 'ﾋﾄﾘ ﾀﾛｳ' });
  const twice = [
    await seedDeposit(prisma, orgId, accountId, 3000n, { status: 'held', counterparty: 'ﾌﾀﾘ ﾊﾅｺ', occurredAt: new Date('2026-11-21T09:00:00Z') }),
    await seedDeposit(prisma, orgId, accountId, 3000n, { status: 'held', counterparty: 'ﾌﾀﾘ ﾊﾅｺ' }),
  ];
  const alone = await seedDeposit(prisma, orgId, accountId, 4000n, { status: 'held', counterparty: 'ﾋﾄﾘ ﾀﾛｳ' });
  return { scope: { organisation_id: orgId, mode: 'test' as const }, shared, own, twice, alone };
}

test('when two held deposits would each be confirmed for the same order, then the preview lists neither of them, and lists the deposit with an order of its own', async () => {
  const { scope, own, alone } = await twoForOneAndOneAlone();

  const preview = await previewRules(deps, { type: 'rules.preview', ...scope, matching_rules: [] });

  expect(preview).toEqual({ held_examined: 3, held_left_out: false, confirmations: [{ transaction_id: alone.id, order_id: own.id, reason: 'exact' }] });
});

test('when a confirmation names one order for two deposits, then both are left held and the order stays open, and the other pair is confirmed', async () => {
  const { scope, shared, own, twice, alone } = await twoForOneAndOneAlone();
  const confirmations = [
    { transaction_id: twice[0]!.id, order_id: shared.id },
    { transaction_id: twice[1]!.id, order_id: shared.id },
    { transaction_id: alone.id, order_id: own.id },
  ];

  const result = await confirmPreviewed(
    deps,
    { type: 'rules.confirm_previewed', ...scope, matching_rules: [], confirmations, decided_by: 'user:usr_test', trigger: 'dashboard' },
    () => true,
  );

  expect(result).toEqual({ confirmed: [{ ...confirmations[2], reason: 'exact' }], left_held: confirmations.slice(0, 2) });
  const deposits = await prisma.transaction.findMany({ where: { id: { in: twice.map((d) => d.id) } }, select: { status: true, orderId: true } });
  expect(deposits).toEqual([
    { status: 'held', orderId: null },
    { status: 'held', orderId: null },
  ]);
  expect(await prisma.order.findUniqueOrThrow({ where: { id: shared.id }, select: { status: true } })).toEqual({ status: 'open' });
  expect(await prisma.order.findUniqueOrThrow({ where: { id: own.id }, select: { status: true } })).toEqual({ status: 'paid' });
});

test("when a confirmation names another organisation's deposit, or another mode's, then it is left held and nothing of it changes", async () => {
  const mine = await twoForOneAndOneAlone();
  const theirs = await twoForOneAndOneAlone();
  const confirmations = [{ transaction_id: theirs.alone.id, order_id: theirs.own.id }];

  for (const scope of [mine.scope, { ...theirs.scope, mode: 'live' as const }]) {
    const result = await confirmPreviewed(
      deps,
      { type: 'rules.confirm_previewed', ...scope, matching_rules: [], confirmations, decided_by: 'user:usr_test', trigger: 'dashboard' },
      () => true,
    );

    expect(result).toEqual({ confirmed: [], left_held: confirmations });
  }
  expect(await prisma.transaction.findUniqueOrThrow({ where: { id: theirs.alone.id }, select: { status: true, orderId: true } })).toEqual({
    status: 'held',
    orderId: null,
  });
  expect(await prisma.order.findUniqueOrThrow({ where: { id: theirs.own.id }, select: { status: true } })).toEqual({ status: 'open' });
});
