import type { BankAccountRow, Db } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import type { Slice } from './slices';

/**
 * One page of the accounts in scope, oldest first; the cursor is the id of the last account the
 * client saw (undefined when that is not an account in scope). Accounts have no `seq`, so the
 * order is (created_at, id).
 */
export async function listAccountsInScope(db: Db, scope: Scope, query: { limit: number; startingAfter?: string }): Promise<Slice<BankAccountRow> | undefined> {
  const inScope = { organisationId: scope.organisationId, mode: scope.mode, ...(scope.bankAccountId === null ? {} : { id: scope.bankAccountId }) };
  let after = {};
  if (query.startingAfter !== undefined) {
    const cursor = await db.bankAccount.findFirst({ where: { ...inScope, id: query.startingAfter }, select: { id: true, createdAt: true } });
    if (cursor === null) return undefined;
    after = { OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: cursor.id } }] };
  }
  const rows = await db.bankAccount.findMany({
    where: { AND: [inScope, after] },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: query.limit + 1,
  });
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}

/** The ids of an organisation's accounts in a mode, oldest first: what a person of it may use; and which of them are dedicated. */
export async function accountIdsOf(db: Db, organisationId: string, mode: string): Promise<{ accountIds: string[]; dedicatedAccountIds: string[] }> {
  const rows = await db.bankAccount.findMany({
    where: { organisationId, mode },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { id: true, dedicated: true },
  });
  return { accountIds: rows.map((r) => r.id), dedicatedAccountIds: rows.filter((r) => r.dedicated).map((r) => r.id) };
}

/** An organisation's own accounts in a mode (not the dedicated transfer accounts of its pool), oldest first. */
export function ownAccountsOf(db: Db, organisationId: string, mode: string): Promise<BankAccountRow[]> {
  return db.bankAccount.findMany({ where: { organisationId, mode, dedicated: false }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}
