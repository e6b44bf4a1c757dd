import { createPrisma, type PrismaClient, type Tx } from '@pmatch/db';
import { createTestDatabase, type TestDatabase } from '@pmatch/testkit';
import { listOrders } from '../src/data/orders';
import { listTransactions } from '../src/data/transactions';
import type { AuthContext } from '../src/domain/auth';

/**
 * Listing one status reads a page of that status, not the organisation's history: the rows a
 * listing read are counted in its own transaction (pg_stat_xact_user_tables).
 */

let db: TestDatabase;
let prisma: PrismaClient;
const HISTORY = 3_000;

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url);
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

let organisations = 0;
/** An organisation with `accounts` live bank accounts, and a live key's view of it. */
async function organisation(accounts = 1): Promise<{ auth: AuthContext; accountIds: string[] }> {
  organisations += 1;
  const id = `org_lists_${organisations}`;
  await prisma.organisation.create({ data: { id, name: 'n', ownerEmail: 'o@example.com' } });
  const accountIds: string[] = [];
  for (let a = 0; a < accounts; a += 1) {
    const account = await prisma.bankAccount.create({
      data: { id: `ba_lists_${organisations}_${a}`, organisationId: id, mode: 'live', bankCode: '0001', branchCode: '001', accountNumber: String(2_000_000 + a), holderName: 'ｼﾖﾂﾌﾟ' },
    });
    accountIds.push(account.id);
  }
  return { auth: { keyId: 'key_x', organisationId: id, mode: 'live', permission: 'read_write', bankAccountId: null, accountIds }, accountIds };
}

/** What `list` returns, and the rows of `table` it read to do so. */
async function listed<T>(table: string, list: (tx: Tx) => Promise<T>): Promise<{ result: T; read: number }> {
  return prisma.$transaction(async (tx) => {
    const result = await list(tx);
    const [row] = await tx.$queryRaw<{ read: number }[]>`
      SELECT (COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0))::int AS read FROM pg_stat_xact_user_tables WHERE relname = ${table}`;
    return { result, read: row!.read };
  });
}

test('when an organisation has thousands of unmatched deposits and its few held ones are the oldest, then listing the held ones reads about a page', async () => {
  const { auth, accountIds } = await organisation();
  const insert = (status: string, count: number) => prisma.$executeRaw`
    INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
    SELECT 'txn_lists_' || ${status} || '_' || g, ${auth.organisationId}, 'live', ${accountIds[0]}, ${status} || '-' || g, 'deposit', ${status},
           1000 + g, 'ﾔﾏﾀﾞ', '2026-11-21T00:00:00Z'
    FROM generate_series(1, ${count}::int) g ORDER BY g`;
  await insert('held', 5);
  await insert('unmatched', HISTORY);
  await prisma.$executeRaw`ANALYZE transactions`;

  const { result, read } = await listed('transactions', (tx) => listTransactions(tx, auth, { status: 'held', limit: 10 }));

  expect(result!.rows.map((t) => t.id)).toEqual([5, 4, 3, 2, 1].map((g) => `txn_lists_held_${g}`));
  expect(result!.hasMore).toBe(false);
  expect(read).toBeLessThan(HISTORY / 10);
});

test('when an organisation has thousands of expired orders on its accounts and its few canceled ones are the oldest, then listing the canceled ones reads about a page', async () => {
  // Orders spread over the organisation's accounts, as a shop's are: on one account the matcher's
  // candidate index (account, amount, status) would answer the listing no worse.
  const { auth, accountIds } = await organisation(20);
  const insert = (status: string, count: number) => prisma.$executeRaw`
    INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token, closed_at)
    SELECT 'ord_lists_' || ${status} || '_' || g, ${auth.organisationId}, 'live', (${accountIds}::text[])[1 + g % 20], ${status}, 1000 + g, 'ﾔﾏﾀﾞ ﾀﾛｳ',
           ${status} || '-' || g, 'item', '2026-11-01T00:00:00Z', '2026-11-15T00:00:00Z', md5(${status} || g), '2026-11-15T00:00:00Z'
    FROM generate_series(1, ${count}::int) g ORDER BY g`;
  await insert('canceled', 5);
  await insert('expired', HISTORY);
  await prisma.$executeRaw`ANALYZE orders`;

  const { result, read } = await listed('orders', (tx) => listOrders(tx, auth, { status: 'canceled', limit: 10 }));

  expect(result!.rows.map((o) => o.id)).toEqual([5, 4, 3, 2, 1].map((g) => `ord_lists_canceled_${g}`));
  expect(read).toBeLessThan(HISTORY / 10);
});
