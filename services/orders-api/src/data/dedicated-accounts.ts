import { Prisma, sql, preparedQuery, type Db, type Sql } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import type { DedicatedAccountState } from '../domain/dedicated-accounts';

/**
 * Dedicated transfer accounts (振込専用口座, docs/decisions/0170-dedicated-transfer-accounts.md):
 * which is free, whose it is, and giving one out. Every statement here runs inside the transaction
 * that writes the order, so an account is given exactly when its order is stored.
 */

type PoolScope = Pick<Scope, 'organisationId' | 'mode'>;

/**
 * A free account, locked for the caller's transaction: given to no buyer, and never given or its
 * last order closed at or before `restedSince`. Rows another transaction holds are skipped, not
 * waited for. Its order is the row's own (`order_id`): when another transaction gives the account
 * between this statement's snapshot and its lock, the lock reads the row again and the order it
 * now names, not committed in that snapshot, fails the test, so an account is never given twice.
 */
const takeFreeAccount = preparedQuery<PoolScope & { restedSince: Date }, { bankAccountId: string }>(
  'orders_api.take_free_dedicated_account',
  (p) => sql`SELECT d.bank_account_id AS "bankAccountId" FROM dedicated_accounts d
   WHERE d.organisation_id = ${p.organisationId} AND d.mode = ${p.mode} AND d.customer_reference IS NULL
     AND (d.order_id IS NULL OR EXISTS (SELECT 1 FROM orders o WHERE o.id = d.order_id AND o.closed_at <= ${p.restedSince}::timestamptz))
   ORDER BY d.given_at NULLS FIRST, d.seq
   LIMIT 1 FOR UPDATE OF d SKIP LOCKED`,
);

/** The account given to this buyer for good, locked (a second order of theirs waits for the first). */
const customerAccount = preparedQuery<PoolScope & { customerReference: string }, { bankAccountId: string }>(
  'orders_api.customer_dedicated_account',
  (p) => sql`SELECT d.bank_account_id AS "bankAccountId" FROM dedicated_accounts d
   WHERE d.organisation_id = ${p.organisationId} AND d.mode = ${p.mode} AND d.customer_reference = ${p.customerReference}
   FOR UPDATE`,
);

/** Until the transaction ends, the one first order of a buyer: two at once would each take an account. */
const holdCustomer = preparedQuery<PoolScope & { customerReference: string }, never>(
  'orders_api.hold_dedicated_customer',
  (p) => sql`SELECT pg_advisory_xact_lock(hashtextextended('dedicated:' || ${p.organisationId} || ':' || ${p.mode} || ':' || ${p.customerReference}, 0))`,
);

/** Records the account as given to the order (and, for good, to its buyer); only while it is the account read. */
const giveAccount = preparedQuery<{ bankAccountId: string; orderId: string; customerReference: string | null; at: Date }, never>(
  'orders_api.give_dedicated_account',
  (p) => sql`UPDATE dedicated_accounts SET order_id = ${p.orderId}, given_at = ${p.at}::timestamptz, customer_reference = ${p.customerReference}::text
   WHERE bank_account_id = ${p.bankAccountId} AND customer_reference IS NULL`,
);

/**
 * The account a new order is to be on: the buyer's (`customerReference`) when they have one, else
 * a free one, locked; null when none is free. Run in the transaction that then stores the order
 * and calls `recordGiven`.
 */
export async function accountForNewOrder(
  tx: Sql,
  scope: PoolScope,
  customerReference: string | null,
  restedSince: Date,
): Promise<{ bankAccountId: string; new: boolean } | null> {
  if (customerReference !== null) {
    await tx.rows(holdCustomer, { ...scope, customerReference });
    const [theirs] = await tx.rows(customerAccount, { ...scope, customerReference });
    if (theirs !== undefined) return { bankAccountId: theirs.bankAccountId, new: false };
  }
  const [free] = await tx.rows(takeFreeAccount, { ...scope, restedSince });
  return free === undefined ? null : { bankAccountId: free.bankAccountId, new: true };
}

/** Records a free account taken by `accountForNewOrder` as given to the order stored on it (and to its buyer). */
export async function recordGiven(tx: Sql, given: { bankAccountId: string; orderId: string; customerReference: string | null; at: Date }): Promise<void> {
  const changed = await tx.count(giveAccount, given);
  if (changed !== 1) throw new Error(`dedicated account ${given.bankAccountId} was not free when given`);
}

/** Per organisation and mode: dedicated accounts in all, and those free at `restedSince` (for the gauge). */
export async function countDedicatedAccounts(db: Db, restedSince: Date): Promise<{ organisationId: string; mode: string; total: number; free: number }[]> {
  const rows = await db.$queryRaw<{ organisationId: string; mode: string; total: bigint; free: bigint }[]>`
    SELECT d.organisation_id AS "organisationId", d.mode, count(*) AS total,
           count(*) FILTER (WHERE d.customer_reference IS NULL AND (d.order_id IS NULL OR o.closed_at <= ${restedSince})) AS free
    FROM dedicated_accounts d LEFT JOIN orders o ON o.id = d.order_id
    GROUP BY d.organisation_id, d.mode`;
  return rows.map((row) => ({ organisationId: row.organisationId, mode: row.mode, total: Number(row.total), free: Number(row.free) }));
}

/** One dedicated account as the console lists it: the account, where it stands and whom it was last given to. */
export interface DedicatedAccountListed {
  bankAccountId: string;
  bankCode: string;
  bankName: string | null;
  branchCode: string;
  branchName: string | null;
  accountType: string;
  accountNumber: string;
  holderName: string;
  state: DedicatedAccountState;
  orderId: string | null;
  orderExternalId: string | null;
  customerReference: string | null;
}

/** The state of a pool row, in SQL: d the dedicated account, o its last order. */
const STATE_SQL = (restedSince: Date) => Prisma.sql`CASE WHEN d.customer_reference IS NOT NULL THEN 'buyer'
       WHEN d.order_id IS NULL OR o.closed_at <= ${restedSince} THEN 'free'
       WHEN o.closed_at IS NULL THEN 'order' ELSE 'resting' END`;

/**
 * The dedicated accounts of an organisation's mode, by number, at most `limit`, with how many
 * there are in each state (all of them, not only those listed) at `restedSince`.
 */
export async function listDedicatedPool(
  db: Db,
  scope: PoolScope,
  restedSince: Date,
  limit: number,
): Promise<{ accounts: DedicatedAccountListed[]; counts: Record<DedicatedAccountState, number> }> {
  const accounts = await db.$queryRaw<DedicatedAccountListed[]>`
    SELECT b.id AS "bankAccountId", b.bank_code AS "bankCode", b.bank_name AS "bankName", b.branch_code AS "branchCode",
           b.branch_name AS "branchName", b.account_type AS "accountType", b.account_number AS "accountNumber", b.holder_name AS "holderName",
           ${STATE_SQL(restedSince)} AS state, d.order_id AS "orderId", o.external_id AS "orderExternalId", d.customer_reference AS "customerReference"
    FROM dedicated_accounts d JOIN bank_accounts b ON b.id = d.bank_account_id LEFT JOIN orders o ON o.id = d.order_id
    WHERE d.organisation_id = ${scope.organisationId} AND d.mode = ${scope.mode}
    ORDER BY b.bank_code, b.branch_code, b.account_type, b.account_number
    LIMIT ${limit}`;
  const grouped = await db.$queryRaw<{ state: DedicatedAccountState; n: bigint }[]>`
    SELECT ${STATE_SQL(restedSince)} AS state, count(*) AS n
    FROM dedicated_accounts d LEFT JOIN orders o ON o.id = d.order_id
    WHERE d.organisation_id = ${scope.organisationId} AND d.mode = ${scope.mode}
    GROUP BY 1`;
  const counts: Record<DedicatedAccountState, number> = { free: 0, order: 0, buyer: 0, resting: 0 };
  for (const row of grouped) counts[row.state] = Number(row.n);
  return { accounts, counts };
}
