import { EVENTS_PER_ANNOUNCEMENT, EXCHANGES, type EventsRecorded, type Mode, type NewEvent, ROUTING_KEYS, newId, randomBase62 } from '@pmatch/contracts';
import { currentTraceparent } from './trace-context';
import { asSql, sql, preparedQuery, type Placeholders, type Columns, type SqlOrPrisma, type SqlPart, type SqlText } from './sql';

export interface OutboxMessage {
  exchange: string;
  routingKey: string;
  payload: object;
  messageId?: string;
  /** The trace the message is part of (W3C `traceparent`); `outboxValues` stamps the current one. */
  traceparent?: string;
}

/**
 * How long a relay may take to publish the outbox rows it holds (claimed, or inserted leased by
 * their writer and handed to it) before another relay may claim them. Long enough for a batch and
 * its confirms on a slow broker; a batch that takes longer may be published twice, which consumers
 * dedupe.
 */
export const OUTBOX_LEASE_MS = 15_000;

/** The `leased_until` of an outbox row inserted leased (`outboxInsert`'s `leased`). */
export const OUTBOX_LEASED_UNTIL = `now() + interval '${OUTBOX_LEASE_MS} milliseconds'`;

/** The parameters of `outboxInsert`: its rows' columns. */
export type OutboxValues = Columns<{ outboxMessageId: string; outboxExchange: string; outboxRoutingKey: string; outboxPayload: string; outboxHeaders: string }>;

/**
 * The INSERT of outbox rows, alone or as a CTE beside the write they announce, in the order given
 * (the relay publishes by id). `onlyIf` may name the row at hand as `u`. `leased` inserts them
 * leased, for a writer that hands them to its relay once its statement committed (see
 * `OutboxHandOver`): only for a statement that commits on its own.
 */
export function outboxInsert(p: Placeholders<OutboxValues>, onlyIf?: SqlPart, { leased = false }: { leased?: boolean } = {}): SqlText {
  return sql`INSERT INTO outbox (message_id, exchange, routing_key, payload, headers${leased ? ', leased_until' : ''})
  SELECT u.message_id, u.exchange, u.routing_key, u.payload, u.headers${leased ? `, ${OUTBOX_LEASED_UNTIL}` : ''}
  FROM unnest(${p.outboxMessageId}::text[], ${p.outboxExchange}::text[], ${p.outboxRoutingKey}::text[], ${p.outboxPayload}::jsonb[], ${p.outboxHeaders}::jsonb[])
       WITH ORDINALITY AS u(message_id, exchange, routing_key, payload, headers, n)
  ${onlyIf === undefined ? '' : sql`WHERE ${onlyIf}\n  `}ORDER BY u.n`;
}

/** An outbox message with the id its row was inserted with, which is how the relay marks it published. */
export type LeasedMessage = OutboxMessage & { messageId: string };

/**
 * Takes the outbox rows a statement inserted leased (`outboxInsert`'s `leased`), once it committed,
 * and publishes them (the writer's `OutboxRelay.publishLeased`).
 */
export type OutboxHandOver = (messages: LeasedMessage[]) => void;

/**
 * The values of `outboxInsert`'s parameters for these messages. A message without a trace is
 * stamped with the current one (so a message handed over later publishes with it too).
 */
export function outboxValues(messages: OutboxMessage[]): OutboxValues {
  const traceparent = currentTraceparent();
  for (const m of messages) if (m.traceparent === undefined && traceparent !== undefined) m.traceparent = traceparent;
  return {
    outboxMessageId: messages.map((m) => m.messageId ?? `msg_${randomBase62(24)}`),
    outboxExchange: messages.map((m) => m.exchange),
    outboxRoutingKey: messages.map((m) => m.routingKey),
    outboxPayload: messages.map((m) => JSON.stringify(m.payload)),
    outboxHeaders: messages.map((m) => JSON.stringify(m.traceparent === undefined ? {} : { traceparent: m.traceparent })),
  };
}

const insertOutbox = preparedQuery<OutboxValues>('db.insert_outbox', (p) => outboxInsert(p));

/** Whose events they are, and when they happened. */
export interface EventScope {
  organisationId: string;
  mode: Mode;
  bankAccountId: string | null;
  at: Date;
}

/** The parameters of `eventsInsert`: the events' scope and their columns. */
type EventsValues = EventScope & Columns<{ eventId: string; eventType: string; eventData: string }>;

/**
 * The INSERT of events, as a CTE beside the write they record; `seq` follows the order given. No
 * RETURNING: the writing services may insert events but not read them.
 */
function eventsInsert(p: Placeholders<EventsValues>): SqlText {
  return sql`INSERT INTO events (id, organisation_id, mode, bank_account_id, type, data, created_at)
     SELECT e.id, ${p.organisationId}, ${p.mode}, ${p.bankAccountId}, e.type, e.data, ${p.at}
     FROM unnest(${p.eventId}::text[], ${p.eventType}::text[], ${p.eventData}::jsonb[]) WITH ORDINALITY AS e(id, type, data, n)
     ORDER BY e.n`;
}

function eventsValues(scope: EventScope, ids: string[], events: NewEvent[]): EventsValues {
  return { ...scope, eventId: ids, eventType: events.map((e) => e.type), eventData: events.map((e) => JSON.stringify(e.data)) };
}

/** Events and their outbox rows in one statement. */
const insertEventsAndOutbox = preparedQuery<EventsValues & OutboxValues>(
  'db.insert_events_and_outbox',
  (p) => sql`WITH recorded AS (${eventsInsert(p)}) ${outboxInsert(p)}`,
);

/**
 * A new id for each event and the outbox messages that tell the dispatcher of them: one message
 * for up to `EVENTS_PER_ANNOUNCEMENT` events, its message id the id of its first event.
 */
export function eventAnnouncements(scope: { organisationId: string; mode: Mode }, events: NewEvent[]): { ids: string[]; announcements: LeasedMessage[] } {
  const recorded = events.map((event) => ({ event_id: newId('event'), type: event.type }));
  const announcements: LeasedMessage[] = [];
  for (let first = 0; first < recorded.length; first += EVENTS_PER_ANNOUNCEMENT) {
    const message: EventsRecorded = { organisation_id: scope.organisationId, mode: scope.mode, events: recorded.slice(first, first + EVENTS_PER_ANNOUNCEMENT) };
    announcements.push({ exchange: EXCHANGES.events, routingKey: ROUTING_KEYS.eventRecorded, payload: message, messageId: message.events[0]!.event_id });
  }
  return { ids: recorded.map((e) => e.event_id), announcements };
}

/** Queues a broker message in the caller's DB transaction; the relay publishes it after commit. */
export async function enqueue(tx: SqlOrPrisma, message: OutboxMessage): Promise<void> {
  await enqueueAll(tx, [message]);
}

/** Queues broker messages in the caller's DB transaction with one INSERT; the relay publishes them after commit. */
export async function enqueueAll(tx: SqlOrPrisma, messages: OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await asSql(tx).count(insertOutbox, outboxValues(messages));
}

/**
 * Records events in the caller's DB transaction with the outbox row announcing them, so that a
 * state change and its announcement commit or roll back together; one statement whatever their
 * number.
 * Recorded order, which GET /v1/events shows, is (tx_id, seq): the caller's DB transaction (the
 * `tx_id` default), then the order given.
 */
export async function recordEvents(
  tx: SqlOrPrisma,
  scope: EventScope,
  events: NewEvent[],
  /** Other broker messages of the same state change, queued in the same statement. */
  alsoEnqueue: OutboxMessage[] = [],
): Promise<string[]> {
  if (events.length === 0) {
    await enqueueAll(tx, alsoEnqueue);
    return [];
  }
  const { ids, announcements } = eventAnnouncements(scope, events);
  await asSql(tx).count(insertEventsAndOutbox, { ...outboxValues([...announcements, ...alsoEnqueue]), ...eventsValues(scope, ids, events) });
  return ids;
}
