import type { EventRow, PrismaClient } from '@pmatch/db';
import type { AuthContext } from '../domain/auth';
import { pageBySeq, type Page } from './pages';
import { scopeOf } from './scope';

/** Events in recorded order (oldest first), after the cursor event when one is given. */
export async function listEvents(
  prisma: PrismaClient,
  auth: AuthContext,
  query: { type?: string; limit: number; startingAfter?: string },
): Promise<Page<EventRow> | undefined> {
  const scope = scopeOf(auth);
  return pageBySeq(
    query,
    (id) => prisma.event.findFirst({ where: { id, ...scope }, select: { seq: true } }),
    (cursorSeq, take) =>
      prisma.event.findMany({
        where: {
          ...scope,
          ...(query.type === undefined ? {} : { type: query.type }),
          ...(cursorSeq === undefined ? {} : { seq: { gt: cursorSeq } }),
        },
        orderBy: { seq: 'asc' },
        take,
      }),
  );
}
