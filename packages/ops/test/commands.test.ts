import { TEST_DEDICATED_POOL, createPrisma, type PrismaClient } from '@pmatch/db';
import { ManualClock } from '@pmatch/platform';
import { createTestDatabase, type TestDatabase } from '@pmatch/testkit';
import { createOrganisation, issueApiKey, revokeApiKey, updateSettings } from '../src/commands';

let db: TestDatabase;
let prisma: PrismaClient;

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url, { poolSize: 10 });
});

afterAll(async () => {
  await prisma.$disconnect();
  await db.drop();
});

test('when several first test keys are issued at once, then they all succeed and the organisation has one test bank account and one pool of dedicated ones', async () => {
  const organisation = await createOrganisation(prisma, { name: '同時商店', ownerEmail: 'owner@example.com' });

  const keys = await Promise.all(
    Array.from({ length: 6 }, (_, n) => issueApiKey(prisma, { organisationId: organisation.id, mode: 'test', name: `racer ${n}`, permission: 'read_write' })),
  );

  expect(new Set(keys.map((key) => key.id)).size).toBe(6);
  expect(await prisma.bankAccount.count({ where: { organisationId: organisation.id, mode: 'test', dedicated: false } })).toBe(1);
  const pool = await prisma.bankAccount.findMany({ where: { organisationId: organisation.id, mode: 'test', dedicated: true } });
  expect(pool).toHaveLength(TEST_DEDICATED_POOL);
  expect(await prisma.dedicatedAccount.count({ where: { bankAccountId: { in: pool.map((account) => account.id) }, orderId: null } })).toBe(TEST_DEDICATED_POOL);
});

test('when a key is revoked, then revoked_at is the time of the given clock', async () => {
  const organisation = await createOrganisation(prisma, { name: '時計商店', ownerEmail: 'owner@example.com' });
  const key = await issueApiKey(prisma, { organisationId: organisation.id, mode: 'live', name: 'k', permission: 'read_only' });
  const clock = new ManualClock('2026-11-22T02:17:01.123Z');

  const revoked = await revokeApiKey(prisma, { keyId: key.id }, clock);

  expect(revoked).toEqual({ id: key.id, revoked_at: '2026-11-22T02:17:01.123Z' });
});

test('when only one setting is given, then the other keeps its value', async () => {
  const organisation = await createOrganisation(prisma, { name: '設定商店', ownerEmail: 'owner@example.com' });
  await updateSettings(prisma, { organisationId: organisation.id, mode: 'test', matchingRules: ['corporate_abbreviation', 'kana_width'] });

  const settings = await updateSettings(prisma, { organisationId: organisation.id, mode: 'test', autoConfirmLateOrders: true });

  expect(settings).toEqual({
    object: 'settings',
    auto_confirm_late_orders: true,
    matching_rules: ['corporate_abbreviation', 'kana_width'],
    livemode: false,
  });
});
