import type { Db, Tx, TransactionRow } from '@pmatch/db';

/** Whether the order is open and an unmatched deposit of its account and amount came at or after its ordered_at. */
export async function mayExplainUnmatchedDeposit(db: Db, orderId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM orders o JOIN transactions t
        ON t.bank_account_id = o.bank_account_id AND t.amount = o.amount AND t.status = 'unmatched'
       AND t.direction = 'deposit' AND t.occurred_at >= o.ordered_at
      WHERE o.id = ${orderId} AND o.status = 'open'
    ) AS found`;
  return rows[0]?.found === true;
}

/** The unmatched deposits a late order may explain, locked for the decision, oldest first. */
export async function lockUnmatchedDeposits(tx: Tx, bankAccountId: string, amount: bigint, notBefore: Date): Promise<TransactionRow[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM transactions
    WHERE bank_account_id = ${bankAccountId} AND amount = ${amount} AND status = 'unmatched'
      AND direction = 'deposit' AND occurred_at >= ${notBefore}
    ORDER BY seq FOR UPDATE`;
  if (rows.length === 0) return [];
  return tx.transaction.findMany({ where: { id: { in: rows.map((r) => r.id) } }, orderBy: { seq: 'asc' } });
}
