import type { TransactionStatus } from '@pmatch/contracts';
import type { Db, TransactionRow } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import { sliceBySeq, type Slice } from './slices';
import { scopeOf } from './scope';

export async function findTransaction(db: Db, scope: Scope, id: string): Promise<TransactionRow | null> {
  return db.transaction.findFirst({ where: { id, ...scopeOf(scope) } });
}

/** Transactions newest first, after the cursor transaction when given; undefined when the cursor is unknown. */
export async function listTransactions(
  db: Db,
  scope: Scope,
  query: { status?: TransactionStatus; limit: number; startingAfter?: string },
): Promise<Slice<TransactionRow> | undefined> {
  const inScope = scopeOf(scope);
  return sliceBySeq(
    query,
    (id) => db.transaction.findFirst({ where: { id, ...inScope }, select: { seq: true } }),
    (cursorSeq, take) =>
      db.transaction.findMany({
        where: {
          ...inScope,
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(cursorSeq === undefined ? {} : { seq: { lt: cursorSeq } }),
        },
        orderBy: { seq: 'desc' },
        take,
      }),
  );
}
