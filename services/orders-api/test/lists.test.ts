import { type PrismaClient, type Tx } from '@pmatch/db';
import { rowsReadInTransaction, usePrismaTestDatabase } from '@pmatch/testkit';
import { listOrders } from '../src/data/orders';
import { listTransactions } from '../src/data/transactions';
import { listDeliveryAttempts } from '../src/data/webhook-endpoints';
import type { ApiKeyAuth } from '../src/domain/api-key-auth';

/**
 * Listing one status reads a page of that status, and a webhook endpoint's delivery log a page of
 * its own attempts, not the history of the organisation or of every endpoint: the rows a listing
 * read are counted in its own transaction (pg_stat_xact_user_tables).
 */

let prisma: PrismaClient;
const HISTORY = 3_000;

usePrismaTestDatabase(undefined, (opened) => ({ prisma } = opened));

let organisations = 0;
/** An organisation with `accounts` live bank accounts, and a live key's view of it. */
async function organisation(accounts = 1): Promise<{ auth: ApiKeyAuth; accountIds: string[] }> {
  organisations += 1;
  const id = `org_lists_${organisations}`;
  await prisma.organisation.create({ data: { id, name: 'n', ownerEmail: 'o@example.com' } });
  const accountIds: string[] = [];
  for (let a = 0; a < accounts; a += 1) {
    const account = await prisma.bankAccount.create({
      data: {
        id: `ba_lists_${organisations}_${a}`,
        organisationId: id,
        mode: 'live',
        bankCode: '0001',
        branchCode: '001',
        accountNumber: String(2_000_000 + a),
        holderName: 'ｼﾖﾂﾌﾟ',
      },
    });
    accountIds.push(account.id);
  }
  return {
    auth: { keyId: 'key_x', organisationId: id, mode: 'live', permission: 'read_write', bankAccountId: null, accountIds, keyHash: 'hash_x', cached: false },
    accountIds,
  };
}

/** What `list` returns, and the rows of `table` it read to do so. */
async function listed<T>(table: string, list: (tx: Tx) => Promise<T>): Promise<{ result: T; read: number }> {
  return prisma.$transaction(async (tx) => {
    const result = await list(tx);
    return { result, read: await rowsReadInTransaction(tx, table) };
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

/**
 * A webhook endpoint of a new organisation with `deliveries` deliveries of as many events, each
 * delivered in `attemptsEach` attempts logged in delivery order; returns the endpoint's id.
 */
async function endpointWithLog(deliveries: number, attemptsEach: number): Promise<string> {
  const { auth } = await organisation();
  const endpointId = `we_lists_${organisations}`;
  const key = `lists_${organisations}`;
  await prisma.$executeRaw`INSERT INTO webhook_endpoints (id, organisation_id, mode, url, secret_encrypted)
    VALUES (${endpointId}, ${auth.organisationId}, 'live', 'https://example.com/hook', 's')`;
  await prisma.$executeRaw`INSERT INTO events (id, organisation_id, mode, type, data)
    SELECT 'evt_' || ${key} || '_' || g, ${auth.organisationId}, 'live', 'order.paid', '{}' FROM generate_series(1, ${deliveries}::int) g`;
  await prisma.$executeRaw`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count)
    SELECT 'dlv_' || ${key} || '_' || g, ${endpointId}, 'evt_' || ${key} || '_' || g, 'succeeded', ${attemptsEach}::int
    FROM generate_series(1, ${deliveries}::int) g`;
  await prisma.$executeRaw`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms)
    SELECT 'dlv_' || ${key} || '_' || g, n, CASE WHEN n = ${attemptsEach}::int THEN 200 ELSE 500 END, 5
    FROM generate_series(1, ${deliveries}::int) g, generate_series(1, ${attemptsEach}::int) n ORDER BY g, n`;
  await prisma.$executeRaw`ANALYZE webhook_delivery_attempts`;
  await prisma.$executeRaw`ANALYZE webhook_deliveries`;
  return endpointId;
}

/** The delivery log page `listDeliveryAttempts` gives, as (event, attempt) pairs, and the attempts it read. */
async function deliveryLog(endpointId: string, query: { eventId?: string; limit: number; beforeAttemptId?: bigint }) {
  const { result, read } = await listed('webhook_delivery_attempts', (tx) => listDeliveryAttempts(tx, endpointId, query));
  return { page: result.rows.map((a) => [a.event_id, a.attempt]), hasMore: result.hasMore, read, lastId: result.rows.at(-1)?.id };
}

test("when an endpoint's few attempts are older than thousands of another merchant's, then its delivery log reads about a page", async () => {
  const quiet = await endpointWithLog(2, 2);
  await endpointWithLog(HISTORY, 1);
  const key = quiet.replace('we_', '');

  const log = await deliveryLog(quiet, { limit: 10 });

  expect(log.page).toEqual([
    [`evt_${key}_2`, 2],
    [`evt_${key}_2`, 1],
    [`evt_${key}_1`, 2],
    [`evt_${key}_1`, 1],
  ]);
  expect(log.hasMore).toBe(false);
  expect(log.read).toBeLessThan(HISTORY / 10);
});

test('when an endpoint has thousands of attempts and another merchant thousands of newer ones, then each page of its delivery log reads about a page, and one event reads its own', async () => {
  const busy = await endpointWithLog(HISTORY / 3, 3);
  await endpointWithLog(HISTORY, 1);
  const key = busy.replace('we_', '');

  const first = await deliveryLog(busy, { limit: 10 });
  const second = await deliveryLog(busy, { limit: 10, beforeAttemptId: first.lastId });
  const oldEvent = await deliveryLog(busy, { limit: 10, eventId: `evt_${key}_1` });

  const newest = HISTORY / 3;
  expect(first.page.slice(0, 4)).toEqual([
    [`evt_${key}_${newest}`, 3],
    [`evt_${key}_${newest}`, 2],
    [`evt_${key}_${newest}`, 1],
    [`evt_${key}_${newest - 1}`, 3],
  ]);
  expect(second.page[0]).toEqual([`evt_${key}_${newest - 3}`, 2]);
  expect([first.hasMore, second.hasMore]).toEqual([true, true]);
  expect(oldEvent.page).toEqual([
    [`evt_${key}_1`, 3],
    [`evt_${key}_1`, 2],
    [`evt_${key}_1`, 1],
  ]);
  expect(oldEvent.hasMore).toBe(false);
  for (const log of [first, second, oldEvent]) expect(log.read).toBeLessThan(HISTORY / 10);
});
