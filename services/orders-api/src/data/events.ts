import type { EventRow, PrismaClient } from '@pmatch/db';
import type { AuthContext } from '../domain/auth';
import { scopeOf } from './scope';

export interface EventPage {
  rows: EventRow[];
  hasMore: boolean;
}

/** Events in recorded order (oldest first), after the cursor event when one is given. */
export async function listEvents(
  prisma: PrismaClient,
  auth: AuthContext,
  query: { type?: string; limit: number; startingAfter?: string },
): Promise<EventPage | undefined> {
  const scope = scopeOf(auth);
  let afterSeq: bigint | undefined;
  if (query.startingAfter !== undefined) {
    const cursor = await prisma.event.findFirst({ where: { id: query.startingAfter, ...scope }, select: { seq: true } });
    if (cursor === null) return undefined;
    afterSeq = cursor.seq;
  }
  const rows = await prisma.event.findMany({
    where: {
      ...scope,
      ...(query.type === undefined ? {} : { type: query.type }),
      ...(afterSeq === undefined ? {} : { seq: { gt: afterSeq } }),
    },
    orderBy: { seq: 'asc' },
    take: query.limit + 1,
  });
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
