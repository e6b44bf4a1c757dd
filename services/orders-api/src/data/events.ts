import { Prisma, eventFields, type Db, type EventRow } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import type { Slice } from './slices';

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
export async function waitForEarlierTransactions(db: Db, maxWaitMs: number): Promise<boolean> {
  const [start] = await db.$queryRaw<{ xmax: string; settled: boolean }[]>`
    SELECT pg_snapshot_xmax(s)::text AS xmax, pg_snapshot_xmin(s) = pg_snapshot_xmax(s) AS settled
    FROM pg_current_snapshot() s`;
  if (start!.settled) return true;
  const deadline = Date.now() + maxWaitMs;
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 20)) {
    const [now] = await db.$queryRaw<{ settled: boolean }[]>`
      SELECT pg_snapshot_xmin(pg_current_snapshot()) >= ${start!.xmax}::xid8 AS settled`;
    if (now!.settled) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/**
 * Events in recorded order (tx_id, seq), oldest first, after the cursor event when given;
 * undefined when the cursor is not an event in scope. Only events of transactions below the
 * snapshot's horizon are listed, after waiting (at most `settleWaitMs`) for the transactions
 * running when asked, so paging never skips one (docs/decisions/0019-events-listed-below-the-snapshot-horizon.md).
 */
export async function listEvents(
  db: Db,
  scope: Scope,
  query: { type?: string; limit: number; startingAfter?: string },
  settleWaitMs = EVENTS_SETTLE_WAIT_MS,
): Promise<Slice<EventRow> | undefined> {
  await waitForEarlierTransactions(db, settleWaitMs);
  const inScope = Prisma.sql`organisation_id = ${scope.organisationId} AND mode = ${scope.mode}
    ${scope.bankAccountId === null ? Prisma.empty : Prisma.sql`AND bank_account_id = ${scope.bankAccountId}`}`;
  let afterCursor = Prisma.empty;
  if (query.startingAfter !== undefined) {
    const [cursor] = await db.$queryRaw<{ tx_id: string; seq: bigint }[]>`
      SELECT tx_id::text AS tx_id, seq FROM events WHERE id = ${query.startingAfter} AND ${inScope}`;
    if (cursor === undefined) return undefined;
    afterCursor = Prisma.sql`AND (tx_id, seq) > (${cursor.tx_id}::xid8, ${cursor.seq})`;
  }
  const rows = await db.$queryRaw<EventRow[]>`
    SELECT ${Prisma.raw(eventFields())} FROM events
    WHERE ${inScope}
      ${query.type === undefined ? Prisma.empty : Prisma.sql`AND type = ${query.type}`}
      ${afterCursor}
      AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY tx_id, seq
    LIMIT ${query.limit + 1}`;
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
