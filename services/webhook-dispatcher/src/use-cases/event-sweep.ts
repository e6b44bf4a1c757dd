import type { Sql } from '@pmatch/db';
import type { Clock, Logger } from '@pmatch/platform';
import { readEventsAfter, type EventPosition } from '../data/unreceived-events';
import type { DispatcherMetrics } from './metrics';
import { receiveEvents, type ReceiveEventsDeps } from './receive-events';

export interface EventSweepOptions {
  /** An event is looked at once it was recorded this long ago: its message had time to arrive. */
  graceMs: number;
  /** How far back a newly started dispatcher looks; shorter than the inbox is kept (INBOX_RETENTION_MS). */
  lookbackMs: number;
  /** Events read per pass at most. */
  batchSize: number;
}

/**
 * Finds recorded events whose `event.recorded` message never arrived and takes them in through
 * `receiveEvents`: it walks the events table in (created_at, seq) order from `lookbackMs` before
 * its start to `graceMs` before now, a batch per pass, and keeps its position only when a pass
 * succeeds. Taking an event in twice creates nothing (the inbox row is written with the
 * deliveries; docs/decisions/0082-event-sweep-finds-lost-event-messages.md).
 */
export class EventSweep {
  private position: EventPosition;

  constructor(
    private readonly deps: ReceiveEventsDeps & { sql: Sql; clock: Clock; logger: Logger; metrics: DispatcherMetrics },
    private readonly options: EventSweepOptions,
  ) {
    this.position = { createdAt: new Date(deps.clock.now().getTime() - options.lookbackMs), seq: 0n };
  }

  /** One pass: resolves with the events read (the periodic task runs again at once while it reads some). */
  async pass(): Promise<number> {
    const before = new Date(this.deps.clock.now().getTime() - this.options.graceMs);
    const events = await readEventsAfter(this.deps.sql, this.position, before, this.options.batchSize);
    const last = events.at(-1);
    if (last === undefined) return 0;
    const missed = events.filter((e) => !e.received);
    if (missed.length > 0) {
      const deliveries = await receiveEvents(this.deps, missed, { sweep: true });
      this.deps.metrics.eventsSwept.inc(missed.length);
      this.deps.logger.warn({ events: missed.length, deliveries }, 'event sweep took in events whose message never arrived');
    }
    this.position = last.position;
    return events.length;
  }
}
