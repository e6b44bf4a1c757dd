import { EVENTS_PER_ANNOUNCEMENT, EventRecordedMessage, newId } from '../src';

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
