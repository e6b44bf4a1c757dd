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

const orderEvent = <T extends EventType>(type: T) =>
  z.object({ ...envelope, type: z.literal(type), data: z.object({ object: Order }) });
const transactionEvent = <T extends EventType>(type: T) =>
  z.object({ ...envelope, type: z.literal(type), data: z.object({ object: Transaction }) });

export const Event = z.discriminatedUnion('type', [
  orderEvent('order.created'),
  orderEvent('order.updated'),
  orderEvent('order.paid'),
  orderEvent('order.canceled'),
  orderEvent('order.expired'),
  z.object({
    ...envelope,
    type: z.literal('order.payment_reversed'),
    data: z.object({ object: Order, previous_payment: Payment, reversal: Reversal.optional() }),
  }),
  transactionEvent('transaction.deposited'),
  transactionEvent('transaction.withdrawn'),
  z.object({
    ...envelope,
    type: z.literal('transaction.held'),
    data: z.object({ object: Transaction, candidate_order_ids: z.array(OrderId) }),
  }),
  z.object({
    ...envelope,
    type: z.literal('webhook.test'),
    data: z.object({ object: z.object({ message: z.string() }) }),
  }),
]);
export type Event = z.infer<typeof Event>;

/** What a state change records: the event type and its data, before an id and time are given. */
export type EventData = Event['data'];
export type NewEvent = { [K in Event as K['type']]: { type: K['type']; data: K['data'] } }[EventType];

export const EventListQuery = ListQuery.extend({ type: z.enum(EVENT_TYPES).optional() });
