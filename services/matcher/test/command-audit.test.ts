import { AppError, MatcherCommand } from '@pmatch/contracts';
import { type Database, type PrismaClient } from '@pmatch/db';
import { ManualClock } from '@pmatch/platform';
import { uniqueName } from '@pmatch/testkit';
import type { Redis } from 'ioredis';
import { runCommand } from '../src/use-cases/commands';
import type { MatcherDeps } from '../src/use-cases/deps';
import { matcherDeps, seedAccount, seedDeposit, seedOrder } from './support/seed';
import { testReadings } from './support/readings';
import { useMatcherStores } from './support/stores';

/** A person's decision carries its audit row to the matcher, which writes it in the decision's transaction. */

let database: Database;
let prisma: PrismaClient;
let redis: Redis;
let deps: MatcherDeps;

useMatcherStores(async (stores) => {
  ({ database, prisma, redis } = stores);
  deps = matcherDeps(database, redis, new ManualClock('2026-11-22T10:00:00Z'), await testReadings());
});

const audit = { user_id: 'usr_auditor', user_email: 'op@example.com', ip: '192.0.2.7', action: 'transaction.match', detail: { remember_payer: false } };

test('when a console match is carried out, then its audit row is written with it, naming the deposit and what came of it', async () => {
  const { orgId, accountId } = await seedAccount(prisma);
  const order = await seedOrder(prisma, orgId, accountId, 4100n, { payerName: 'ｽｽﾞｷ' });
  const deposit = await seedDeposit(prisma, orgId, accountId, 4100n, { counterparty: 'ﾀﾅｶ', status: 'held' });
  const command = {
    type: 'transaction.match',
    organisation_id: orgId,
    mode: 'test',
    transaction_id: deposit.id,
    order_id: order.id,
    decided_by: 'user:usr_auditor',
    trigger: 'dashboard',
    audit,
  };

  await runCommand(deps, MatcherCommand.parse(command) as never, uniqueName('cmd_'), () => true);

  expect(await prisma.auditLog.findMany({ where: { organisationId: orgId } })).toEqual([
    expect.objectContaining({
      mode: 'test',
      userId: 'usr_auditor',
      userEmail: 'op@example.com',
      action: 'transaction.match',
      objectId: deposit.id,
      detail: { remember_payer: false, outcome: 'done', status: 'confirmed' },
      ip: '192.0.2.7',
    }),
  ]);
});

test('when a console command is refused, then nothing is written, its audit row neither', async () => {
  const { orgId, accountId } = await seedAccount(prisma);
  const order = await seedOrder(prisma, orgId, accountId, 4200n);
  const deposit = await seedDeposit(prisma, orgId, accountId, 4300n, { status: 'held' });
  const command = {
    type: 'transaction.match',
    organisation_id: orgId,
    mode: 'test',
    transaction_id: deposit.id,
    order_id: order.id,
    trigger: 'dashboard',
    audit,
  };

  const refused = await runCommand(deps, MatcherCommand.parse(command) as never, uniqueName('cmd_'), () => true).catch((e: unknown) => e);

  expect(refused).toBeInstanceOf(AppError);
  expect(await prisma.auditLog.count({ where: { organisationId: orgId } })).toBe(0);
  expect((await prisma.transaction.findUniqueOrThrow({ where: { id: deposit.id } })).status).toBe('held');
});
