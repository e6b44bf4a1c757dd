import type { TransactionStatus } from '@pmatch/contracts';
import type { Db, PrismaClient, TransactionRow } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import { pageBySeq, type Page } from './pages';
import { scopeOf } from './scope';

export async function findTransaction(prisma: PrismaClient, scope: Scope, id: string): Promise<TransactionRow | null> {
  return prisma.transaction.findFirst({ where: { id, ...scopeOf(scope) } });
}

/** Transactions newest first, after the cursor transaction when given; undefined when the cursor is unknown. */
export async function listTransactions(
  prisma: Db,
  scope: Scope,
  query: { status?: TransactionStatus; limit: number; startingAfter?: string },
): Promise<Page<TransactionRow> | undefined> {
  const inScope = scopeOf(scope);
  return pageBySeq(
    query,
    (id) => prisma.transaction.findFirst({ where: { id, ...inScope }, select: { seq: true } }),
    (cursorSeq, take) =>
      prisma.transaction.findMany({
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
