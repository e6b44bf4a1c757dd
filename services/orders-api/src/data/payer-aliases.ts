import type { Db, PayerAliasRow } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import { sliceBySeq, type Slice } from './slices';
import { scopeOf } from './scope';

/** The payers people taught, newest first, on one account when given; undefined when the cursor is unknown. */
export async function listPayerAliases(
  db: Db,
  scope: Scope,
  query: { bankAccountId?: string; limit: number; startingAfter?: string },
): Promise<Slice<PayerAliasRow> | undefined> {
  const inScope = { ...scopeOf(scope), ...(query.bankAccountId === undefined ? {} : { bankAccountId: query.bankAccountId }) };
  return sliceBySeq(
    query,
    (id) => db.payerAlias.findFirst({ where: { id, ...scopeOf(scope) }, select: { seq: true } }),
    (cursorSeq, take) =>
      db.payerAlias.findMany({ where: { ...inScope, ...(cursorSeq === undefined ? {} : { seq: { lt: cursorSeq } }) }, orderBy: { seq: 'desc' }, take }),
  );
}

/** Deletes a taught payer in scope; false when there is none of that id. */
export async function deletePayerAlias(db: Db, scope: Scope, id: string): Promise<boolean> {
  const { count } = await db.payerAlias.deleteMany({ where: { id, ...scopeOf(scope) } });
  return count === 1;
}
