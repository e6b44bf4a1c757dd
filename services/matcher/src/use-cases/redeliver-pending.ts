import { EXCHANGES, ROUTING_KEYS, type DepositReceived } from '@pmatch/contracts';
import { enqueue } from '@pmatch/db';
import { lockStuckPendingDeposits } from '../data/pending-deposits';
import type { MatcherDeps } from './deps';

/** A deposit still pending this long after it was stored has lost its message somewhere. */
export const PENDING_GRACE_MS = 60_000;
const BATCH_SIZE = 100;

/**
 * The safety net under at-least-once delivery: a deposit whose `deposit.received` was dead-lettered
 * (say after a long database or Redis outage) or never published is asked for again through the
 * outbox. Deciding is idempotent, so a deposit asked for twice is still decided once.
 * Resolves with how many deposits were asked for again.
 */
export async function redeliverPendingDeposits(deps: MatcherDeps): Promise<number> {
  const now = deps.clock.now();
  const before = new Date(now.getTime() - PENDING_GRACE_MS);
  return deps.prisma.$transaction(async (tx) => {
    const stuck = await lockStuckPendingDeposits(tx, before, BATCH_SIZE);
    for (const deposit of stuck) {
      const message: DepositReceived = { transaction_id: deposit.id, bank_account_id: deposit.bank_account_id };
      await enqueue(tx, {
        exchange: EXCHANGES.bank,
        routingKey: ROUTING_KEYS.depositReceived,
        payload: message,
        messageId: `redeliver_${deposit.id}_${now.getTime()}`,
      });
      // Touching the row restarts its grace period, so one stuck deposit is asked for once a minute.
      await tx.transaction.update({ where: { id: deposit.id }, data: { updatedAt: now } });
    }
    if (stuck.length > 0) deps.logger.warn({ count: stuck.length }, 'pending deposits asked for again');
    return stuck.length;
  });
}
