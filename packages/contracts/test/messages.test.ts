import { EVENTS_PER_ANNOUNCEMENT, EventsRecorded, ORDERS_PER_REGISTRATION, OrdersRegistered, newId } from '../src';

const scope = { organisation_id: 'org_1', mode: 'live' as const };

describe('EventsRecorded', () => {
  test('when a message announces several events, then it is read as it is, in its order', () => {
    const events = [
      { event_id: newId('event'), type: 'transaction.deposited' as const },
      { event_id: newId('event'), type: 'order.paid' as const },
    ];

    expect(EventsRecorded.parse({ ...scope, events })).toEqual({ ...scope, events });
  });

  test('when a message announces no event, too many, an unknown type or a bad id, then it is refused', () => {
    const event = () => ({ event_id: newId('event'), type: 'order.paid' });

    expect(EventsRecorded.safeParse({ ...scope, events: Array.from({ length: EVENTS_PER_ANNOUNCEMENT }, event) }).success).toBe(true);
    for (const events of [
      [],
      Array.from({ length: EVENTS_PER_ANNOUNCEMENT + 1 }, event),
      [{ ...event(), type: 'order.vanished' }],
      [{ ...event(), event_id: 'ord_1234567890123' }],
    ]) {
      expect(EventsRecorded.safeParse({ ...scope, events }).success).toBe(false);
    }
    expect(EventsRecorded.safeParse({ event_id: newId('event'), ...scope }).success).toBe(false);
  });
});

describe('OrdersRegistered', () => {
  const order = () => ({ order_id: newId('order'), bank_account_id: newId('bankAccount') });

  test('when a message registers several orders, then it is read as it is, in its order', () => {
    const orders = [order(), order(), order()];

    expect(OrdersRegistered.parse({ orders })).toEqual({ orders });
  });

  test('when a message registers no order, too many or an order without its account, then it is refused', () => {
    expect(OrdersRegistered.safeParse({ orders: Array.from({ length: ORDERS_PER_REGISTRATION }, order) }).success).toBe(true);
    for (const orders of [
      [],
      Array.from({ length: ORDERS_PER_REGISTRATION + 1 }, order),
      [{ order_id: newId('order') }],
      [{ ...order(), order_id: 'evt_1234567890123' }],
    ]) {
      expect(OrdersRegistered.safeParse({ orders }).success).toBe(false);
    }
    expect(OrdersRegistered.safeParse({ order_id: newId('order') }).success).toBe(false);
  });
});
