import { sql, preparedQuery, type Columns, type Sql, type PreparedQuery, type Tx, type TransactionRow } from '@pmatch/db';
import { inboxClaimSql } from '@pmatch/platform';

/** Which deposits count as waiting for a late order (`lateOrderExaminer` says why each). */
export type Waiting = 'pending or unmatched' | 'unmatched';

/** An `order.registered` message as the check reads it. */
export interface RegisteredOrder {
  orderId: string;
  /** The account the message says the order is on: checked against the order's row. */
  bankAccountId: string;
  messageId: string;
}

/**
 * What `settleWithoutDeposit` did with a message: `settled` (recorded as handled), `waited for` (a
 * deposit may be the order's: left for the caller), `out of scope` (no such order on the account
 * the message names: nothing written).
 */
export type Settlement = 'settled' | 'waited for' | 'out of scope';

type SettleValues = Columns<RegisteredOrder> & { consumer: string };

/**
 * The statuses are written out, not a parameter, so that every plan can use
 * transactions_waiting_idx, whose predicate they imply. Each order is read by its id alone, one
 * scalar subquery per message: as an EXISTS over the account's orders, a plan made on statistics
 * that predate them may hash every open order instead.
 */
export const settleQueries: Record<Waiting, PreparedQuery<SettleValues, { found: boolean; known: boolean }>> = {
  'pending or unmatched': settleQuery('matcher.late_orders_settle_unless_pending_or_unmatched', "('pending', 'unmatched')"),
  unmatched: settleQuery('matcher.late_orders_settle_unless_unmatched', "('unmatched')"),
};

function settleQuery(name: string, statuses: string): PreparedQuery<SettleValues, { found: boolean; known: boolean }> {
  return preparedQuery(
    name,
    (p) => sql`WITH registered AS (
       SELECT * FROM unnest(${p.orderId}::text[], ${p.bankAccountId}::text[], ${p.messageId}::text[]) WITH ORDINALITY
         AS r(order_id, bank_account_id, message_id, i)),
     waiting AS (
       SELECT r.i, r.message_id,
         coalesce((SELECT o.bank_account_id = r.bank_account_id FROM orders o WHERE o.id = r.order_id), false) AS known,
         coalesce((
           SELECT o.bank_account_id = r.bank_account_id AND o.status = 'open' AND EXISTS (
               SELECT 1 FROM transactions t
               WHERE t.bank_account_id = o.bank_account_id AND t.amount = o.amount AND t.status IN ${statuses}
                 AND t.direction = 'deposit' AND t.occurred_at >= o.ordered_at)
           FROM orders o WHERE o.id = r.order_id), false) AS found
       FROM registered r),
     claimed AS (${inboxClaimSql({ consumer: p.consumer, messageId: 'message_id' }, 'FROM waiting WHERE known AND NOT found')})
     SELECT found, known FROM waiting ORDER BY i`,
  );
}

/**
 * Settles each late-order message whose order is not open or for which no `waiting` deposit of its
 * account and amount came at or after its ordered_at, recording the message as handled: one
 * statement for them all, no DB transaction. Answers per message, in the order given, what it did;
 * a message a deposit waits for is left unclaimed, for the caller to look again or decide, and one
 * whose order is not on the account it names is left alone.
 */
export async function settleWithoutDeposit(db: Sql, waiting: Waiting, consumer: string, messages: RegisteredOrder[]): Promise<Settlement[]> {
  const rows = await db.rows(settleQueries[waiting], {
    consumer,
    orderId: messages.map((m) => m.orderId),
    bankAccountId: messages.map((m) => m.bankAccountId),
    messageId: messages.map((m) => m.messageId),
  });
  return rows.map((row) => (!row.known ? 'out of scope' : row.found ? 'waited for' : 'settled'));
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
