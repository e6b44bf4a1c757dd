import { orderObject } from '@pmatch/db';
import { recordEventsFor } from '../data/conditional-writes';
import type { MatcherDeps } from './deps';

const BATCH_SIZE = 500;

/**
 * Moves open orders past expires_at to expired, each with order.expired, one batch per DB
 * transaction. Rows are claimed with SKIP LOCKED so replicas share the sweep; the conditional
 * status keeps a concurrent payment safe. Resolves with how many orders expired.
 */
export async function expireDueOrders(deps: MatcherDeps): Promise<number> {
  const now = deps.clock.now();
  return deps.prisma.$transaction(async (tx) => {
    const due = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM orders WHERE status = 'open' AND expires_at < ${now}
      ORDER BY expires_at LIMIT ${BATCH_SIZE} FOR UPDATE SKIP LOCKED`;
    for (const { id } of due) {
      const order = await tx.order.findUniqueOrThrow({ where: { id } });
      // closed_at is when the order left open: the moment its deadline passed, not when we noticed.
      const expired = await tx.order.update({ where: { id }, data: { status: 'expired', closedAt: order.expiresAt, updatedAt: now } });
      await recordEventsFor(tx, expired, now, [{ type: 'order.expired', data: { object: orderObject(expired, deps.publicBaseUrl) } }]);
    }
    return due.length;
  });
}
