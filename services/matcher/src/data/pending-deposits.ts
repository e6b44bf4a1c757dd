import { asSql, sql, preparedQuery, type SqlOrPrisma } from '@pmatch/db';

/**
 * Walks transactions_pending_idx, which holds only pending deposits, oldest first: the table of
 * every deposit ever stored is never read.
 */
export const stuckPendingDeposits = preparedQuery<{ before: Date; limit: number }, { id: string; bank_account_id: string }>(
  'matcher.stuck_pending_deposits',
  (p) => sql`SELECT id, bank_account_id FROM transactions
   WHERE status = 'pending' AND direction = 'deposit' AND updated_at < ${p.before}
   ORDER BY seq LIMIT ${p.limit} FOR UPDATE SKIP LOCKED`,
);

/** Pending deposits untouched since `before`, oldest first, locked for the caller's transaction. */
export async function lockStuckPendingDeposits(tx: SqlOrPrisma, before: Date, limit: number): Promise<{ id: string; bank_account_id: string }[]> {
  return asSql(tx).rows(stuckPendingDeposits, { before, limit });
}
