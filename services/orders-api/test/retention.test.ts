import type { Database, PrismaClient } from '@pmatch/db';
import { PLAN_CACHE_MODES, planNodes, preparedPlan, useServiceTestDatabase } from '@pmatch/testkit';
import { RETENTION_BATCH, deleteExpiredRecords, deletePublishedOutbox } from '../src/data/retention';

/**
 * The retention sweep's own statements, as orders-api's role runs them (the end-to-end test of
 * the sweep on the service's clock is in test/e2e/order-lifecycle.test.ts).
 */

const DAY = 24 * 3600_000;
const now = new Date('2026-11-22T00:00:00Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * DAY);

let owner: PrismaClient;
let database: Database;

useServiceTestDatabase('orders-api', (opened) => {
  ({ owner, database } = opened);
});

/** Outbox rows named `prefix-1…count`, in that order, published at `publishedAt` (null: not yet). */
async function outboxRows(prefix: string, count: number, publishedAt: Date | null): Promise<void> {
  await owner.$executeRaw`
    INSERT INTO outbox (message_id, exchange, routing_key, payload, published_at)
    SELECT ${prefix} || '-' || g, 'pmatch.events', 'event.recorded', '{}'::jsonb, ${publishedAt}
    FROM generate_series(1, ${count}) g ORDER BY g`;
}

const left = async (prefix: string) => owner.outbox.count({ where: { messageId: { startsWith: `${prefix}-` } } });

describe('published outbox rows', () => {
  test('when rows were published more than a week ago, then the sweep deletes them oldest first, and keeps younger and unpublished ones', async () => {
    await outboxRows('waiting', 1, null);
    await outboxRows('old', 3, daysAgo(8));
    await outboxRows('young', 2, daysAgo(6));

    const deleted = await deleteExpiredRecords(database.prisma, now);

    expect(deleted).toBe(3);
    expect([await left('waiting'), await left('old'), await left('young')]).toEqual([1, 0, 2]);
    expect(await deleteExpiredRecords(database.prisma, now)).toBe(0);
  });

  test.each(PLAN_CACHE_MODES)(
    'when the outbox holds a week of rows, then a pass (%s) reads the oldest batch by the primary key, not the table',
    async (planCacheMode) => {
      await outboxRows(`week-${planCacheMode}`, RETENTION_BATCH + 3_000, daysAgo(3));
      await owner.$executeRaw`ANALYZE outbox`;

      const plan = await preparedPlan(owner, deletePublishedOutbox.text, `'${daysAgo(7).toISOString()}'`, planCacheMode);

      const nodes = planNodes(plan);
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Seq Scan');
      expect(
        nodes.filter((n) => n['Relation Name'] === 'outbox' && n['Node Type'] !== 'ModifyTable').map((n) => [n['Node Type'], n['Index Name']]),
      ).toContainEqual(['Index Scan', 'outbox_pkey']);
    },
  );
});
