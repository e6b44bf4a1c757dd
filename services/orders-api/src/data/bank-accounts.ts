import type { BankAccountRow, Db } from '@pmatch/db';
import type { AuthContext } from '../domain/auth';
import type { Page } from './pages';

/**
 * One page of the accounts in scope, oldest first; the cursor is the id of the last account the
 * client saw (undefined when that is not an account in scope). Accounts have no `seq`, so the
 * order is (created_at, id).
 */
export async function listAccountsInScope(
  db: Db,
  auth: AuthContext,
  query: { limit: number; startingAfter?: string },
): Promise<Page<BankAccountRow> | undefined> {
  const scope = { organisationId: auth.organisationId, mode: auth.mode, ...(auth.bankAccountId === null ? {} : { id: auth.bankAccountId }) };
  let after = {};
  if (query.startingAfter !== undefined) {
    const cursor = await db.bankAccount.findFirst({ where: { ...scope, id: query.startingAfter }, select: { id: true, createdAt: true } });
    if (cursor === null) return undefined;
    after = { OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: cursor.id } }] };
  }
  const rows = await db.bankAccount.findMany({
    where: { AND: [scope, after] },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: query.limit + 1,
  });
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
