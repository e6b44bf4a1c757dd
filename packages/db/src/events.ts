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
  await tx.outbox.create({
    data: {
      messageId: message.messageId ?? `msg_${randomBase62(24)}`,
      exchange: message.exchange,
      routingKey: message.routingKey,
      payload: message.payload as Prisma.InputJsonValue,
    },
  });
}

/**
 * Records events in the caller's DB transaction, each with its outbox row, so that a state change
 * and its announcement commit or roll back together. The events get increasing `seq` in the order
 * given, which is the recorded order GET /v1/events shows.
 */
export async function recordEvents(
  tx: Tx,
  scope: { organisationId: string; mode: Mode; bankAccountId: string | null; at: Date },
  events: NewEvent[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const event of events) {
    const id = newId('event');
    await tx.event.create({
      data: {
        id,
        organisationId: scope.organisationId,
        mode: scope.mode,
        bankAccountId: scope.bankAccountId,
        type: event.type,
        data: event.data as unknown as Prisma.InputJsonValue,
        createdAt: scope.at,
      },
    });
    const message: EventRecorded = { event_id: id, organisation_id: scope.organisationId, mode: scope.mode, type: event.type };
    await enqueue(tx, { exchange: EXCHANGES.events, routingKey: ROUTING_KEYS.eventRecorded, payload: message, messageId: id });
    ids.push(id);
  }
  return ids;
}
