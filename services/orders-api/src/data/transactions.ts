import type { TransactionStatus } from '@pmatch/contracts';
import type { PrismaClient, TransactionRow } from '@pmatch/db';
import type { AuthContext } from '../domain/auth';
import type { Page } from './orders';
import { scopeOf } from './scope';

export async function findTransaction(prisma: PrismaClient, auth: AuthContext, id: string): Promise<TransactionRow | null> {
  return prisma.transaction.findFirst({ where: { id, ...scopeOf(auth) } });
}

/** Transactions newest first, after the cursor transaction when given; undefined when the cursor is unknown. */
export async function listTransactions(
  prisma: PrismaClient,
  auth: AuthContext,
  query: { status?: TransactionStatus; limit: number; startingAfter?: string },
): Promise<Page<TransactionRow> | undefined> {
  const scope = scopeOf(auth);
  let beforeSeq: bigint | undefined;
  if (query.startingAfter !== undefined) {
    const cursor = await prisma.transaction.findFirst({ where: { id: query.startingAfter, ...scope }, select: { seq: true } });
    if (cursor === null) return undefined;
    beforeSeq = cursor.seq;
  }
  const rows = await prisma.transaction.findMany({
    where: {
      ...scope,
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(beforeSeq === undefined ? {} : { seq: { lt: beforeSeq } }),
    },
    orderBy: { seq: 'desc' },
    take: query.limit + 1,
  });
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
