import { EVENTS_PER_ANNOUNCEMENT, EXCHANGES, type EventsRecorded, type Mode, type NewEvent, ROUTING_KEYS, newId, randomBase62 } from '@pmatch/contracts';
import { asSql, statement, type SqlOrPrisma } from './sql';

export interface OutboxMessage {
  exchange: string;
  routingKey: string;
  payload: object;
  messageId?: string;
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

/**
 * The INSERT of outbox rows, to run alone or as part of a larger statement (a CTE beside the write
 * they announce), so that every writer queues messages in the same format. The rows come from
 * parallel arrays, in the order given (the relay publishes by id): one statement text for any
 * number of rows, so it is prepared once. The arrays are parameters `$firstParameter` to
 * `$firstParameter + 3`, whose values `outboxParameters` gives. `onlyIf` is a condition on the
 * rest of the statement (say, that a CTE inserted a row) under which the rows are inserted; it may
 * name the row at hand as `u` (`u.message_id`), to insert some rows of a batch and not others.
 *
 * `leased` inserts the rows already leased (OUTBOX_LEASE_MS), for a writer that hands them to its
 * relay itself once the statement committed (`OutboxHandOver`): the relay then publishes them
 * without claiming them, one statement fewer per batch. Only for a statement that commits on its
 * own: a row handed over before its transaction commits could be published for a change that then
 * rolls back. A row whose writer dies before handing it over is claimed when its lease runs out.
 */
export function outboxInsert(firstParameter: number, onlyIf?: string, { leased = false }: { leased?: boolean } = {}): string {
  const [messageIds, exchanges, routingKeys, payloads] = [0, 1, 2, 3].map((i) => `$${firstParameter + i}`);
  return `INSERT INTO outbox (message_id, exchange, routing_key, payload${leased ? ', leased_until' : ''})
  SELECT u.message_id, u.exchange, u.routing_key, u.payload${leased ? `, ${OUTBOX_LEASED_UNTIL}` : ''}
  FROM unnest(${messageIds}::text[], ${exchanges}::text[], ${routingKeys}::text[], ${payloads}::jsonb[]) WITH ORDINALITY AS u(message_id, exchange, routing_key, payload, n)
  ${onlyIf === undefined ? '' : `WHERE ${onlyIf}\n  `}ORDER BY u.n`;
}

/** An outbox message with the id its row was inserted with, which is how the relay marks it published. */
export type LeasedMessage = OutboxMessage & { messageId: string };

/**
 * Takes the outbox rows a statement inserted leased (`outboxInsert`'s `leased`), once it committed,
 * and publishes them (the writer's `OutboxRelay.publishLeased`).
 */
export type OutboxHandOver = (messages: LeasedMessage[]) => void;

/** The values of `outboxInsert`'s parameters for these messages, in its order. */
export function outboxParameters(messages: OutboxMessage[]): unknown[] {
  return [
    messages.map((m) => m.messageId ?? `msg_${randomBase62(24)}`),
    messages.map((m) => m.exchange),
    messages.map((m) => m.routingKey),
    messages.map((m) => JSON.stringify(m.payload)),
  ];
}

const insertOutbox = statement('db.insert_outbox', outboxInsert(1));

/**
 * The INSERT of events, to run as part of a larger statement (a CTE beside the write they
 * record). The events get increasing `seq` in the order given: the rows come out of the SELECT in
 * that order and each takes its `seq` default as it is inserted. Its seven parameters, from
 * `$firstParameter` on, are what `eventsParameters` gives; `onlyIf` as for `outboxInsert`. No
 * RETURNING: the writing services may insert events but not read them.
 */
export function eventsInsert(firstParameter: number, onlyIf?: string): string {
  const [organisation, mode, bankAccount, at, ids, types, data] = [0, 1, 2, 3, 4, 5, 6].map((i) => `$${firstParameter + i}`);
  return `INSERT INTO events (id, organisation_id, mode, bank_account_id, type, data, created_at)
     SELECT e.id, ${organisation}, ${mode}, ${bankAccount}, e.type, e.data, ${at}
     FROM unnest(${ids}::text[], ${types}::text[], ${data}::jsonb[]) WITH ORDINALITY AS e(id, type, data, n)
     ${onlyIf === undefined ? '' : `WHERE ${onlyIf}\n     `}ORDER BY e.n`;
}

/** The values of `eventsInsert`'s parameters for these events, in its order. */
export function eventsParameters(scope: EventScope, ids: string[], events: NewEvent[]): unknown[] {
  return [scope.organisationId, scope.mode, scope.bankAccountId, scope.at, ids, events.map((e) => e.type), events.map((e) => JSON.stringify(e.data))];
}

/** Whose events they are, and when they happened. */
export interface EventScope {
  organisationId: string;
  mode: Mode;
  bankAccountId: string | null;
  at: Date;
}

/** Events and their outbox rows in one statement. */
const insertEventsAndOutbox = statement('db.insert_events_and_outbox', `WITH recorded AS (${eventsInsert(5)}) ${outboxInsert(1)}`);

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
  await asSql(tx).count(insertOutbox, outboxParameters(messages));
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
  await asSql(tx).count(insertEventsAndOutbox, [
    ...outboxParameters([...announcements, ...alsoEnqueue]),
    ...eventsParameters(scope, ids, events),
  ]);
  return ids;
}
