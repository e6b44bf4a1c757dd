import { asSql, statement, type SqlOrPrisma } from '@pmatch/db';

/**
 * Parameters: stored (or last asked for) before, how many. Walks transactions_pending_idx, which
 * holds only pending deposits, oldest first: the table of every deposit ever stored is never read.
 */
export const stuckPendingDeposits = statement(
  'matcher.stuck_pending_deposits',
  `SELECT id, bank_account_id FROM transactions
   WHERE status = 'pending' AND direction = 'deposit' AND updated_at < $1
   ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED`,
);

/** Pending deposits untouched since `before`, oldest first, locked for the caller's transaction. */
export async function lockStuckPendingDeposits(tx: SqlOrPrisma, before: Date, limit: number): Promise<{ id: string; bank_account_id: string }[]> {
  return asSql(tx).rows<{ id: string; bank_account_id: string }>(stuckPendingDeposits, [before, limit]);
}
