import { type PrismaClient } from '@pmatch/db';
import { planNodes, rowsReadInTransaction, usePrismaTestDatabase } from '@pmatch/testkit';
import { eventsAbout, searchDeposits, searchOrders } from '../src/data/console-search';
import type { Scope } from '../src/domain/actor';

/**
 * The console's lists stay fast on a long history: a page of held deposits or of one status of
 * orders reads its own rows, not the organisation's history, and an order's timeline finds its
 * events through events_object_idx. Rows read are counted in the listing's own transaction.
 */

let prisma: PrismaClient;
const scope: Scope = { organisationId: 'org_console_search', mode: 'live', bankAccountId: null };
const HISTORY = 3_000;
const HELD = 120;
const PAGE = 50;

usePrismaTestDatabase(undefined, (opened) => ({ prisma } = opened));

beforeAll(async () => {
  await prisma.organisation.create({ data: { id: scope.organisationId, name: 'n', ownerEmail: 'o@example.com' } });
  await prisma.bankAccount.create({
    data: {
      id: 'ba_console_search',
      organisationId: scope.organisationId,
      mode: 'live',
      bankCode: '0001',
      branchCode: '001',
      accountNumber: '1234567',
      holderName: 'h',
    },
  });
  // The excluded history first, then the held deposits: the newest rows are not the ones asked for.
  await prisma.$executeRaw`
    INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
    SELECT 'txn_search' || lpad(n::text, 12, '0'), ${scope.organisationId}, 'live', 'ba_console_search', 'r' || n, 'deposit',
           CASE WHEN n <= ${HISTORY} THEN 'excluded' ELSE 'held' END, 1000 + n, 'ﾔﾏﾀﾞ ﾀﾛｳ', now()
    FROM generate_series(1, ${HISTORY + HELD}) n`;
  await prisma.$executeRaw`
    INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token, closed_at, payment)
    SELECT 'ord_search' || lpad(n::text, 12, '0'), ${scope.organisationId}, 'live', 'ba_console_search',
           CASE WHEN n % 20 = 0 THEN 'canceled' ELSE 'open' END, 1000 + n, 'サトウ ハナコ', 'ext-' || n, 'i', now(), now() + interval '14 days',
           'tok' || n, CASE WHEN n % 20 = 0 THEN now() END, NULL
    FROM generate_series(1, ${HISTORY}) n`;
  await prisma.$executeRaw`
    INSERT INTO events (id, organisation_id, mode, bank_account_id, type, data)
    SELECT 'evt_search' || lpad(n::text, 12, '0'), ${scope.organisationId}, 'live', 'ba_console_search', 'order.updated',
           jsonb_build_object('object', jsonb_build_object('id', 'ord_search' || lpad((n % ${HISTORY} + 1)::text, 12, '0')))
    FROM generate_series(1, ${HISTORY * 2}) n`;
  await prisma.$executeRawUnsafe('ANALYZE transactions, orders, events');
});

test('when the held deposits are listed, then a page reads the held rows it shows, not the excluded history', async () => {
  const { page, read } = await prisma.$transaction(async (tx) => {
    // The counters may still hold reads of earlier transactions on this connection (not yet flushed).
    const before = await rowsReadInTransaction(tx, 'transactions');
    const found = await searchDeposits(tx, scope, { status: 'held', limit: PAGE });
    return { page: found, read: (await rowsReadInTransaction(tx, 'transactions')) - before };
  });

  expect(page.rows).toHaveLength(PAGE);
  expect(page.rows.every((r) => r.status === 'held')).toBe(true);
  expect(read).toBeLessThanOrEqual(PAGE + 1);
});

test('when the held deposits are listed oldest first, then a page and the next read the held rows they show, and follow on without a gap', async () => {
  const { first, second, read } = await prisma.$transaction(async (tx) => {
    // The counters may still hold reads of earlier transactions on this connection (not yet flushed).
    const before = await rowsReadInTransaction(tx, 'transactions');
    const first = await searchDeposits(tx, scope, { status: 'held', oldestFirst: true, limit: PAGE });
    const second = await searchDeposits(tx, scope, { status: 'held', oldestFirst: true, after: first.nextAfter!, limit: PAGE });
    return { first, second, read: (await rowsReadInTransaction(tx, 'transactions')) - before };
  });

  const seqs = [...first.rows, ...second.rows].map((r) => r.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => (a < b ? -1 : 1)));
  expect(new Set(seqs).size).toBe(2 * PAGE);
  expect(first.rows[0]!.id).toBe(`txn_search${String(HISTORY + 1).padStart(12, '0')}`);
  expect(read).toBeLessThanOrEqual(2 * (PAGE + 1));
});

test('when canceled orders are listed, then a page reads only canceled orders', async () => {
  const { page, read } = await prisma.$transaction(async (tx) => {
    // The counters may still hold reads of earlier transactions on this connection (not yet flushed).
    const before = await rowsReadInTransaction(tx, 'orders');
    const found = await searchOrders(tx, scope, { status: 'canceled', limit: PAGE });
    return { page: found, read: (await rowsReadInTransaction(tx, 'orders')) - before };
  });

  expect(page.rows).toHaveLength(PAGE);
  expect(page.nextAfter).toBeDefined();
  expect(read).toBeLessThanOrEqual(PAGE + 1);
});

test('when an order is searched by its external_id, then one row is read', async () => {
  const { page, read } = await prisma.$transaction(async (tx) => {
    // The counters may still hold reads of earlier transactions on this connection (not yet flushed).
    const before = await rowsReadInTransaction(tx, 'orders');
    const found = await searchOrders(tx, scope, { externalId: 'ext-77', limit: PAGE });
    return { page: found, read: (await rowsReadInTransaction(tx, 'orders')) - before };
  });

  expect(page.rows.map((r) => r.externalId)).toEqual(['ext-77']);
  expect(read).toBe(1);
});

test("when an order's timeline is read, then its events are found through events_object_idx", async () => {
  const events = await eventsAbout(prisma, scope, ['ord_search000000000077']);
  const [explained] = await prisma.$queryRawUnsafe<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }[]>(
    `EXPLAIN (FORMAT JSON) SELECT id FROM events WHERE (data #>> '{object,id}') IN ('ord_search000000000077') AND organisation_id = '${scope.organisationId}' AND mode = 'live'`,
  );

  expect(events).toHaveLength(2);
  const indexes = planNodes(explained!['QUERY PLAN'][0]!.Plan)
    .map((n) => n['Index Name'])
    .filter(Boolean);
  expect(indexes).toContain('events_object_idx');
});
