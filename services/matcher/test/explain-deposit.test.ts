import { type Database, type PrismaClient } from '@pmatch/db';
import { ManualClock } from '@pmatch/platform';
import {} from '@pmatch/testkit';
import type { Redis } from 'ioredis';
import { explainDeposit } from '../src/use-cases/explain-deposit';
import type { MatcherDeps } from '../src/use-cases/deps';
import { matcherDeps, seedAccount, seedDeposit, seedOrder } from './support/seed';
import { testReadings } from './support/readings';
import { useMatcherStores } from './support/stores';

/**
 * `deposit.explain` against the real database: a held or unmatched deposit decided again under the
 * rules and orders of now, orders placed after it named, and nothing written.
 */

let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let deps: MatcherDeps;
const clock = new ManualClock('2026-11-22T10:00:00Z');

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  deps = matcherDeps(database, redis, clock, await testReadings());
});

const explain = (orgId: string, transactionId: string) =>
  explainDeposit(deps, { type: 'deposit.explain', organisation_id: orgId, mode: 'test', transaction_id: transactionId });

test('when the rule a held deposit waited for is switched on, then explaining it again gives the order the rule now pays, and the stored deposit is left as it was', async () => {
  const { orgId, accountId } = await seedAccount(prisma);
  const order = await seedOrder(prisma, orgId, accountId, 3100n, { payerName: 'ヤマダ タロウ' });
  const held = await seedDeposit(prisma, orgId, accountId, 3100n, { status: 'held', counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
  const before = await prisma.transaction.findUniqueOrThrow({ where: { id: held.id } });

  const off = await explain(orgId, held.id);
  expect(off).toMatchObject({ outcome: 'held', order_id: null, matching_rules: [], decision: { reason: 'no_name_fits' } });
  expect(off.decision.candidates).toMatchObject([{ order_id: order.id, fit: null, would_fit: 'rule:kana_width' }]);

  await prisma.setting.create({ data: { organisationId: orgId, mode: 'test', matchingRules: ['kana_width'] } });
  const on = await explain(orgId, held.id);
  expect(on).toMatchObject({ outcome: 'confirmed', order_id: order.id, matching_rules: ['kana_width'], decision: { reason: 'rule:kana_width' } });
  expect(on.decision.candidates).toEqual([
    { order_id: order.id, fit: 'rule:kana_width', fit_rules: ['kana_width'], excluded_because: null, not_chosen_because: null },
  ]);

  expect(await prisma.transaction.findUniqueOrThrow({ where: { id: held.id } })).toEqual(before);
  expect((await prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('open');
});

test('when an order of its amount was placed after an unmatched deposit, then the explanation lists it as ordered after the deposit and still finds no order to pay', async () => {
  const { orgId, accountId } = await seedAccount(prisma);
  const deposit = await seedDeposit(prisma, orgId, accountId, 3200n, { status: 'unmatched', occurredAt: new Date('2026-11-22T09:00:00Z') });
  const later = await seedOrder(prisma, orgId, accountId, 3200n, { orderedAt: new Date('2026-11-22T09:30:00Z') });
  await seedOrder(prisma, orgId, accountId, 3201n, { orderedAt: new Date('2026-11-22T09:30:00Z') });

  const now = await explain(orgId, deposit.id);

  expect(now).toMatchObject({ outcome: 'unmatched', order_id: null, decision: { reason: 'no_order_with_amount' } });
  expect(now.decision.candidates).toMatchObject([
    { order_id: later.id, excluded_because: 'ordered_after_deposit', not_chosen_because: 'ordered_after_deposit' },
  ]);
});

test('when the deposit is excluded, or of another organisation, then it is not explained again', async () => {
  const { orgId, accountId } = await seedAccount(prisma);
  const excluded = await seedDeposit(prisma, orgId, accountId, 3300n, { status: 'excluded' });
  const other = await seedAccount(prisma);

  await expect(explain(orgId, excluded.id)).rejects.toMatchObject({ code: 'transaction_not_matchable' });
  await expect(explain(other.orgId, excluded.id)).rejects.toMatchObject({ code: 'resource_missing' });
});
