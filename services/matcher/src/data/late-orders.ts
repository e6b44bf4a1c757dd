import { statement, type Sql, type Statement, type Tx, type TransactionRow } from '@pmatch/db';
import { inboxClaimSql } from '@pmatch/platform';

/** Which deposits count as waiting for a late order (`examineLateOrder` says why each). */
export type Waiting = 'pending or unmatched' | 'unmatched';

/**
 * Parameters: consumer, order id, message id. The statuses are written out, not a parameter, so
 * that every plan can use transactions_waiting_idx, whose predicate they imply.
 */
export const settleStatements: Record<Waiting, Statement> = {
  'pending or unmatched': settleStatement('matcher.late_order_settle_unless_pending_or_unmatched', "('pending', 'unmatched')"),
  unmatched: settleStatement('matcher.late_order_settle_unless_unmatched', "('unmatched')"),
};

function settleStatement(name: string, statuses: string): Statement {
  return statement(
    name,
    `WITH waiting AS (
       SELECT EXISTS (
         SELECT 1 FROM orders o JOIN transactions t
           ON t.bank_account_id = o.bank_account_id AND t.amount = o.amount AND t.status IN ${statuses}
          AND t.direction = 'deposit' AND t.occurred_at >= o.ordered_at
         WHERE o.id = $2 AND o.status = 'open') AS found),
     claimed AS (${inboxClaimSql('$1', '$3', 'NOT (SELECT found FROM waiting)')})
     SELECT found FROM waiting`,
  );
}

/**
 * Settles a late-order message when its order is not open or no `waiting` deposit of its account
 * and amount came at or after its ordered_at, recording the message as handled: one statement,
 * no DB transaction. Resolves with false when such a deposit exists: the message is then left
 * unclaimed, for the caller to look again or decide.
 */
export async function settleWithoutDeposit(sql: Sql, waiting: Waiting, consumer: string, orderId: string, messageId: string): Promise<boolean> {
  const [row] = await sql.rows<{ found: boolean }>(settleStatements[waiting], [consumer, orderId, messageId]);
  return row?.found === false;
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
