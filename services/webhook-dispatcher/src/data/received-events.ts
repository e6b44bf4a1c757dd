import { WEBHOOK_LIMITS, newId, type EventType, type EventsRecorded, type Mode } from '@pmatch/contracts';
import { sql, preparedQuery, type Columns, type Sql } from '@pmatch/db';
import { inboxClaimSql } from '@pmatch/platform';
import { SCHEDULED_ATTEMPTS } from '../domain/retries';

export const EVENTS_CONSUMER = 'webhook-dispatcher.events';

/** One event of an `event.recorded` message as the dispatcher records it; its inbox key is the event id. */
export interface ReceivedEvent {
  eventId: string;
  organisationId: string;
  mode: Mode;
  type: EventType;
}

/** The events of an `event.recorded` message, in its order. */
export function receivedEvents(message: EventsRecorded): ReceivedEvent[] {
  return message.events.map((e) => ({ eventId: e.event_id, organisationId: message.organisation_id, mode: message.mode, type: e.type }));
}

/** The events, then the delivery ids: `idsEach` for each event, its slice in the order given. */
type RecordReceivedEventsValues = Columns<ReceivedEvent> & {
  consumer: string;
  idsEach: number;
  deliveryIds: string[];
  maxAttempts: number;
  now: Date;
};

/**
 * An event is looked up by its id alone and its other columns compared after: with them in the
 * WHERE clause, a plan made on statistics that predate an organisation's growth may walk
 * events_type_idx through every event of the type instead of reading one row by key.
 *
 * An endpoint created after the event was recorded gets none of it, however late the event
 * arrives (a message delayed by an outage, the event sweep): it did not exist when the event
 * happened (docs/decisions/0166-webhook-endpoints-as-they-were-when-the-event-was-recorded.md).
 */
const recordReceivedEventsQuery = preparedQuery<RecordReceivedEventsValues, { i: bigint; known: boolean; needed: bigint; created: bigint }>(
  'dispatcher.receive_events',
  (p) => sql`WITH received AS (
     SELECT r.*, coalesce(ev.known, false) AS known, ev.recorded_at
     FROM unnest(${p.eventId}::text[], ${p.organisationId}::text[], ${p.mode}::text[], ${p.type}::text[]) WITH ORDINALITY
       AS r(event_id, organisation_id, mode, type, i)
     LEFT JOIN LATERAL (
       SELECT (ev.organisation_id, ev.mode, ev.type) = (r.organisation_id, r.mode, r.type) AS known, ev.created_at AS recorded_at
       FROM events ev WHERE ev.id = r.event_id) ev ON true),
   subscribed AS (
     SELECT r.i, e.id AS endpoint_id, r.event_id,
            (${p.deliveryIds}::text[])[((r.i - 1) * ${p.idsEach} + row_number() OVER (PARTITION BY r.i ORDER BY e.id))::int] AS delivery_id
     FROM received r JOIN webhook_endpoints e
       ON r.known AND e.organisation_id = r.organisation_id AND e.mode = r.mode AND e.enabled AND e.deleted_at IS NULL
      AND e.created_at <= r.recorded_at
      AND (cardinality(e.enabled_events) = 0 OR r.type = ANY(e.enabled_events))),
   enough AS (
     SELECT r.i, r.event_id, r.known, count(s.endpoint_id) AS needed
     FROM received r LEFT JOIN subscribed s ON s.i = r.i
     GROUP BY r.i, r.event_id, r.known),
   claimed AS (${inboxClaimSql({ consumer: sql`${p.consumer}::text`, messageId: 'event_id' }, sql`FROM enough WHERE known AND needed <= ${p.idsEach}`, 'message_id AS event_id')}),
   created AS (
     INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, max_attempts, next_attempt_at, created_at, updated_at)
     SELECT s.delivery_id, s.endpoint_id, s.event_id, 'pending', 0, ${p.maxAttempts}::int, ${p.now}::timestamptz, ${p.now}::timestamptz, ${p.now}::timestamptz
     FROM subscribed s JOIN enough USING (i, event_id) JOIN claimed USING (event_id)
     ORDER BY s.endpoint_id, s.event_id
     ON CONFLICT (endpoint_id, event_id) DO NOTHING
     RETURNING id)
   SELECT e.i, e.known, e.needed,
          (SELECT count(*) FROM subscribed s JOIN created c ON c.id = s.delivery_id WHERE s.i = e.i) AS created
   FROM enough e ORDER BY e.i`,
);

/** What `recordReceivedEvents` answers for an event with no row of that id, organisation, mode and type. */
export const OUT_OF_SCOPE = 'out of scope';

/**
 * Records received events in one statement: each as one pending delivery, due at once, per
 * enabled endpoint of its organisation and mode that subscribed to its type and existed when the
 * event was recorded, once per event however
 * often it is redelivered. Returns, per event in the order given, how many deliveries it created
 * (0 for one seen before, or given twice), or OUT_OF_SCOPE for an event whose row is not of the
 * organisation, mode and type the message says (or does not exist): nothing is written for it.
 */
export async function recordReceivedEvents(db: Sql, received: ReceivedEvent[], now: Date): Promise<(number | typeof OUT_OF_SCOPE)[]> {
  const created: (number | typeof OUT_OF_SCOPE)[] = received.map(() => 0);
  const firstOf = new Map<string, number>();
  received.forEach((r, i) => {
    // By everything the message claims, not the id alone: a forged copy of an event, batched with
    // the real one, must not make the real one look like a repeat.
    const key = JSON.stringify([r.eventId, r.organisationId, r.mode, r.type]);
    if (!firstOf.has(key)) firstOf.set(key, i);
  });
  let waiting = [...firstOf.values()];
  let idsEach: number = WEBHOOK_LIMITS.endpointsPerMode;
  while (waiting.length > 0) {
    const batch = waiting.map((i) => received[i]!);
    const rows = await db.rows(recordReceivedEventsQuery, {
      eventId: batch.map((r) => r.eventId),
      organisationId: batch.map((r) => r.organisationId),
      mode: batch.map((r) => r.mode),
      type: batch.map((r) => r.type),
      consumer: EVENTS_CONSUMER,
      idsEach,
      deliveryIds: Array.from({ length: batch.length * idsEach }, () => newId('delivery')),
      maxAttempts: SCHEDULED_ATTEMPTS,
      now,
    });
    // An event that found more endpoints than its slice of ids wrote nothing: again, with larger slices.
    const short: number[] = [];
    let mostNeeded = 0;
    for (const row of rows) {
      const index = waiting[Number(row.i) - 1]!;
      const needed = Number(row.needed);
      if (!row.known) created[index] = OUT_OF_SCOPE;
      else if (needed <= idsEach) created[index] = Number(row.created);
      else {
        short.push(index);
        mostNeeded = Math.max(mostNeeded, needed);
      }
    }
    waiting = short;
    idsEach = mostNeeded;
  }
  return created;
}
