import { EXCHANGES, type EventRecorded, type Mode, type NewEvent, ROUTING_KEYS, newId, randomBase62 } from '@pmatch/contracts';
import type { Prisma, Tx } from './client';

export interface OutboxMessage {
  exchange: string;
  routingKey: string;
  payload: object;
  messageId?: string;
}

/** Queues a broker message in the caller's DB transaction; the relay publishes it after commit. */
export async function enqueue(tx: Tx, message: OutboxMessage): Promise<void> {
  await enqueueAll(tx, [message]);
}

/**
 * Queues broker messages in the caller's DB transaction with one INSERT (no RETURNING: nothing is
 * read back), whatever their number; the relay publishes them after commit.
 */
export async function enqueueAll(tx: Tx, messages: OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await tx.outbox.createMany({
    data: messages.map((message) => ({
      messageId: message.messageId ?? `msg_${randomBase62(24)}`,
      exchange: message.exchange,
      routingKey: message.routingKey,
      payload: message.payload as Prisma.InputJsonValue,
    })),
  });
}

/**
 * Records events in the caller's DB transaction, each with its outbox row, so that a state change
 * and its announcement commit or roll back together. The events get increasing `seq` in the order
 * given, which is the recorded order GET /v1/events shows: they go in as one multi-row INSERT,
 * and PostgreSQL evaluates a VALUES list, and so the `seq` defaults, row by row in order.
 */
export async function recordEvents(
  tx: Tx,
  scope: { organisationId: string; mode: Mode; bankAccountId: string | null; at: Date },
  events: NewEvent[],
  /** Other broker messages of the same state change, queued in the same outbox INSERT. */
  alsoEnqueue: OutboxMessage[] = [],
): Promise<string[]> {
  if (events.length === 0) {
    await enqueueAll(tx, alsoEnqueue);
    return [];
  }
  const ids = events.map(() => newId('event'));
  await tx.event.createMany({
    data: events.map((event, i) => ({
      id: ids[i]!,
      organisationId: scope.organisationId,
      mode: scope.mode,
      bankAccountId: scope.bankAccountId,
      type: event.type,
      data: event.data as unknown as Prisma.InputJsonValue,
      createdAt: scope.at,
    })),
  });
  await enqueueAll(tx, [
    ...events.map((event, i) => {
      const message: EventRecorded = { event_id: ids[i]!, organisation_id: scope.organisationId, mode: scope.mode, type: event.type };
      return { exchange: EXCHANGES.events, routingKey: ROUTING_KEYS.eventRecorded, payload: message, messageId: ids[i]! };
    }),
    ...alsoEnqueue,
  ]);
  return ids;
}
