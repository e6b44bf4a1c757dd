import { z } from './zod';
import { EventId, ListQuery, Order, OrderId, Payment, Reversal, Timestamp, Transaction } from './api';

export const EVENT_TYPES = [
  'order.created',
  'order.updated',
  'order.paid',
  'order.canceled',
  'order.expired',
  'order.payment_reversed',
  'transaction.deposited',
  'transaction.withdrawn',
  'transaction.held',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const envelope = {
  id: EventId,
  object: z.literal('event'),
  livemode: z.boolean(),
  created_at: Timestamp,
};

/** The component name of an event type's schema in the OpenAPI document: order.created → OrderCreatedEvent. */
export function eventSchemaName(type: EventType): string {
  return `${type
    .split(/[._]/)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}Event`;
}

const event = <T extends EventType, D extends z.ZodRawShape>(type: T, data: D) =>
  z.object({ ...envelope, type: z.literal(type), data: z.object(data) }).openapi(eventSchemaName(type));
const orderEvent = <T extends EventType>(type: T) => event(type, { object: Order });
const transactionEvent = <T extends EventType>(type: T) => event(type, { object: Transaction });

export const Event = z
  .discriminatedUnion('type', [
    orderEvent('order.created'),
    orderEvent('order.updated'),
    orderEvent('order.paid'),
    orderEvent('order.canceled'),
    orderEvent('order.expired'),
    event('order.payment_reversed', { object: Order, previous_payment: Payment, reversal: Reversal.optional() }),
    transactionEvent('transaction.deposited'),
    transactionEvent('transaction.withdrawn'),
    event('transaction.held', { object: Transaction, candidate_order_ids: z.array(OrderId) }),
    event('webhook.test', { object: z.object({ message: z.string() }) }),
  ])
  .openapi('Event');
export type Event = z.infer<typeof Event>;

/** What a state change records: the event type and its data, before an id and time are given. */
export type EventData = Event['data'];
export type NewEvent = { [K in Event as K['type']]: { type: K['type']; data: K['data'] } }[EventType];

/** The types `GET /v1/events` lists: every type but `webhook.test`, which is sent on request and never recorded. */
export const RECORDED_EVENT_TYPES = EVENT_TYPES.filter((t): t is Exclude<EventType, 'webhook.test'> => t !== 'webhook.test');
export type RecordedEventType = (typeof RECORDED_EVENT_TYPES)[number];

/** An event as recorded and listed: any event but a `webhook.test`. */
export const RecordedEvent = z
  .discriminatedUnion(
    'type',
    Event.options.filter((schema) => schema.shape.type.value !== 'webhook.test') as unknown as [
      (typeof Event.options)[number],
      ...(typeof Event.options)[number][],
    ],
  )
  .openapi('RecordedEvent');

export const EventListQuery = ListQuery.extend({
  type: z
    .enum(RECORDED_EVENT_TYPES as [RecordedEventType, ...RecordedEventType[]])
    .optional()
    .openapi({ description: 'Only events of this type.' }),
});
