import { Prisma, eventFields, type EventRow, type PrismaClient } from '@pmatch/db';
import type { AuthContext } from '../domain/auth';
import type { Page } from './pages';

/**
 * How long a list waits for transactions that were running when it was asked for. Writes here
 * take milliseconds; one that takes longer delays only how soon its events are listed, never
 * whether, so the list answers with what is safe once this has passed.
 */
export const EVENTS_SETTLE_WAIT_MS = 2000;

/**
 * Waits until every transaction that had a transaction id when this was called has ended
 * (the snapshot's xmin has reached the xmax seen at the start). Resolves false if `maxWaitMs`
 * passed first.
 */
export async function waitForEarlierTransactions(prisma: PrismaClient, maxWaitMs: number): Promise<boolean> {
  const [start] = await prisma.$queryRaw<{ xmax: string; settled: boolean }[]>`
    SELECT pg_snapshot_xmax(s)::text AS xmax, pg_snapshot_xmin(s) = pg_snapshot_xmax(s) AS settled
    FROM pg_current_snapshot() s`;
  if (start!.settled) return true;
  const deadline = Date.now() + maxWaitMs;
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 20)) {
    const [now] = await prisma.$queryRaw<{ settled: boolean }[]>`
      SELECT pg_snapshot_xmin(pg_current_snapshot()) >= ${start!.xmax}::xid8 AS settled`;
    if (now!.settled) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/**
 * Events in recorded order (oldest first), after the cursor event when one is given; undefined
 * when the cursor is not an event the caller can see.
 *
 * Recorded order is (tx_id, seq): the transaction that inserted the event, then its place in that
 * transaction. Only events of transactions below the snapshot's xmin are listed: those have
 * committed or rolled back for good, and any transaction id given out later lies above it. So an
 * event that commits after a client paged past a later-numbered one is never skipped: it was not
 * listed before, and it sorts after everything that was (migration 20261123020000_event_order_and_idempotency).
 * The price: an event shows up once every transaction that began writing before it has ended,
 * anywhere on the server. So that a client still reads its own writes, the list first waits (at
 * most `settleWaitMs`) for the transactions running when it was asked for: then every event
 * committed before the request came is listed.
 */
export async function listEvents(
  prisma: PrismaClient,
  auth: AuthContext,
  query: { type?: string; limit: number; startingAfter?: string },
  settleWaitMs = EVENTS_SETTLE_WAIT_MS,
): Promise<Page<EventRow> | undefined> {
  await waitForEarlierTransactions(prisma, settleWaitMs);
  const scope = Prisma.sql`organisation_id = ${auth.organisationId} AND mode = ${auth.mode}
    ${auth.bankAccountId === null ? Prisma.empty : Prisma.sql`AND bank_account_id = ${auth.bankAccountId}`}`;
  let afterCursor = Prisma.empty;
  if (query.startingAfter !== undefined) {
    const [cursor] = await prisma.$queryRaw<{ tx_id: string; seq: bigint }[]>`
      SELECT tx_id::text AS tx_id, seq FROM events WHERE id = ${query.startingAfter} AND ${scope}`;
    if (cursor === undefined) return undefined;
    afterCursor = Prisma.sql`AND (tx_id, seq) > (${cursor.tx_id}::xid8, ${cursor.seq})`;
  }
  const rows = await prisma.$queryRaw<EventRow[]>`
    SELECT ${Prisma.raw(eventFields())} FROM events
    WHERE ${scope}
      ${query.type === undefined ? Prisma.empty : Prisma.sql`AND type = ${query.type}`}
      ${afterCursor}
      AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY tx_id, seq
    LIMIT ${query.limit + 1}`;
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
