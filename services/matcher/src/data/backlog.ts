import type { PrismaClient } from '@pmatch/db';

/**
 * Held and unmatched deposits of every organisation and mode. Each count reads a partial index of
 * its status only (transactions_held_idx, transactions_waiting_idx), not the transactions.
 */
export async function countWaitingDeposits(prisma: PrismaClient): Promise<{ held: number; unmatched: number }> {
  const [row] = await prisma.$queryRaw<{ held: number; unmatched: number }[]>`
    SELECT (SELECT count(*) FROM transactions WHERE status = 'held')::int AS held,
           (SELECT count(*) FROM transactions WHERE status = 'unmatched')::int AS unmatched`;
  return row ?? { held: 0, unmatched: 0 };
}
