import type { TransactionStatus } from '@pmatch/contracts';
import type { Db, PrismaClient, TransactionRow } from '@pmatch/db';
import type { AuthContext } from '../domain/auth';
import { pageBySeq, type Page } from './pages';
import { scopeOf } from './scope';

export async function findTransaction(prisma: PrismaClient, auth: AuthContext, id: string): Promise<TransactionRow | null> {
  return prisma.transaction.findFirst({ where: { id, ...scopeOf(auth) } });
}

/** Transactions newest first, after the cursor transaction when given; undefined when the cursor is unknown. */
export async function listTransactions(
  prisma: Db,
  auth: AuthContext,
  query: { status?: TransactionStatus; limit: number; startingAfter?: string },
): Promise<Page<TransactionRow> | undefined> {
  const scope = scopeOf(auth);
  return pageBySeq(
    query,
    (id) => prisma.transaction.findFirst({ where: { id, ...scope }, select: { seq: true } }),
    (cursorSeq, take) =>
      prisma.transaction.findMany({
        where: {
          ...scope,
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(cursorSeq === undefined ? {} : { seq: { lt: cursorSeq } }),
        },
        orderBy: { seq: 'desc' },
        take,
      }),
  );
}
