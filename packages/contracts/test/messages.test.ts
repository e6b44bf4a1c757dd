import { EVENTS_PER_ANNOUNCEMENT, EventRecordedMessage, ORDERS_PER_REGISTRATION, OrderRegisteredMessage, newId } from '../src';

const scope = { organisation_id: 'org_1', mode: 'live' as const };

describe('EventRecordedMessage', () => {
  test('when a message announces several events, then it is read as it is, in its order', () => {
    const events = [
      { event_id: newId('event'), type: 'transaction.deposited' as const },
      { event_id: newId('event'), type: 'order.paid' as const },
    ];

    expect(EventRecordedMessage.parse({ ...scope, events })).toEqual({ ...scope, events });
  });

  test('when a message holds one event alone (the shape before 2026-11-24), then it is read as an announcement of that one event', () => {
    const eventId = newId('event');

    expect(EventRecordedMessage.parse({ event_id: eventId, ...scope, type: 'order.created' })).toEqual({
      ...scope,
      events: [{ event_id: eventId, type: 'order.created' }],
    });
  });

  test('when a message announces no event, too many, an unknown type or a bad id, then it is refused', () => {
    const event = () => ({ event_id: newId('event'), type: 'order.paid' });

    expect(EventRecordedMessage.safeParse({ ...scope, events: Array.from({ length: EVENTS_PER_ANNOUNCEMENT }, event) }).success).toBe(true);
    for (const events of [
      [],
      Array.from({ length: EVENTS_PER_ANNOUNCEMENT + 1 }, event),
      [{ ...event(), type: 'order.vanished' }],
      [{ ...event(), event_id: 'ord_1234567890123' }],
    ]) {
      expect(EventRecordedMessage.safeParse({ ...scope, events }).success).toBe(false);
    }
    expect(EventRecordedMessage.safeParse({ event_id: newId('event'), ...scope }).success).toBe(false);
  });
});

describe('OrderRegisteredMessage', () => {
  const order = () => ({ order_id: newId('order'), bank_account_id: newId('bankAccount') });

  test('when a message registers several orders, then it is read as it is, in its order', () => {
    const orders = [order(), order(), order()];

    expect(OrderRegisteredMessage.parse({ orders })).toEqual({ orders });
  });

  test('when a message holds one order alone (the shape before 2026-11-26), then it is read as a registration of that one order', () => {
    const one = order();

    expect(OrderRegisteredMessage.parse(one)).toEqual({ orders: [one] });
  });

  test('when a message registers no order, too many or an order without its account, then it is refused', () => {
    expect(OrderRegisteredMessage.safeParse({ orders: Array.from({ length: ORDERS_PER_REGISTRATION }, order) }).success).toBe(true);
    for (const orders of [[], Array.from({ length: ORDERS_PER_REGISTRATION + 1 }, order), [{ order_id: newId('order') }], [{ ...order(), order_id: 'evt_1234567890123' }]]) {
      expect(OrderRegisteredMessage.safeParse({ orders }).success).toBe(false);
    }
    expect(OrderRegisteredMessage.safeParse({ order_id: newId('order') }).success).toBe(false);
  });
});
