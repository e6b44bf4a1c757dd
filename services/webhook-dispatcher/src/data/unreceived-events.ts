import type { EventType, Mode } from '@pmatch/contracts';
import { sql, preparedQuery, type Sql } from '@pmatch/db';
import { EVENTS_CONSUMER, type ReceivedEvent } from './received-events';

/** A place in the events table, in (created_at, seq) order: the event sweep's cursor. */
export interface EventPosition {
  createdAt: Date;
  seq: bigint;
}

/** An event the sweep looked at: where it is, and whether the dispatcher has received it. */
export interface SweptEvent extends ReceivedEvent {
  position: EventPosition;
  received: boolean;
}

export const readEventsAfterQuery = preparedQuery<
  { consumer: string; afterAt: Date; afterSeq: string; before: Date; limit: number },
  { event_id: string; organisation_id: string; mode: string; type: string; created_at: Date; seq: bigint; received: boolean }
>(
  'dispatcher.events_after',
  (p) => sql`SELECT e.id AS event_id, e.organisation_id, e.mode, e.type, e.created_at, e.seq,
          EXISTS (SELECT 1 FROM inbox i WHERE i.consumer = ${p.consumer}::text AND i.message_id = e.id) AS received
   FROM events e
   WHERE e.created_at >= ${p.afterAt}::timestamptz AND (e.created_at, e.seq) > (${p.afterAt}::timestamptz, ${p.afterSeq}::bigint)
     AND e.created_at < ${p.before}::timestamptz
   ORDER BY e.created_at, e.seq
   LIMIT ${p.limit}::int`,
);

/**
 * The next `limit` events after `after` recorded before `before`, in (created_at, seq) order, each
 * with whether the dispatcher's events consumer has an inbox row for it. One range scan of
 * `events_created_at_idx` and one inbox primary-key probe per row: the cost of a pass is its batch.
 */
export async function readEventsAfter(db: Sql, after: EventPosition, before: Date, limit: number): Promise<SweptEvent[]> {
  const rows = await db.rows(readEventsAfterQuery, { consumer: EVENTS_CONSUMER, afterAt: after.createdAt, afterSeq: after.seq.toString(), before, limit });
  return rows.map((r) => ({
    eventId: r.event_id,
    organisationId: r.organisation_id,
    mode: r.mode as Mode,
    type: r.type as EventType,
    position: { createdAt: r.created_at, seq: BigInt(r.seq) },
    received: r.received,
  }));
}
