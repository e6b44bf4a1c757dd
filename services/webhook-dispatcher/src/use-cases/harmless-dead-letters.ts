import { EventsRecorded, QUEUES } from '@pmatch/contracts';
import type { Sql } from '@pmatch/db';
import type { Broker, Logger } from '@pmatch/platform';
import { allTakenIn } from '../data/taken-in';

/** Letters looked at per pass: the oldest of the dead-letter queue. */
export const DEAD_LETTERS_PER_PASS = 500;

/**
 * Removes the dead letters of `webhook-dispatcher.events` that no longer need anyone: those whose
 * every event has been taken in since (by the event sweep, a replay or a redelivery), so replaying
 * them would create nothing. A letter that does not parse, or names an event not taken in (one
 * out of scope, or not swept yet), stays for a person, and keeps PmatchDeadLetters firing.
 * Resolves with the letters removed.
 */
export async function discardHarmlessDeadLetters(deps: { broker: Broker; sql: Sql; logger: Logger }): Promise<number> {
  if (!deps.broker.connected) return 0;
  const removed = await deps.broker.discardDeadLetters(
    QUEUES.dispatcherEvents,
    async (body) => {
      const letter = EventsRecorded.safeParse(body);
      return (
        letter.success &&
        (await allTakenIn(
          deps.sql,
          letter.data.events.map((e) => e.event_id),
        ))
      );
    },
    DEAD_LETTERS_PER_PASS,
  );
  if (removed > 0)
    deps.logger.warn({ removed, queue: `${QUEUES.dispatcherEvents}.dead` }, 'dead letters removed: every event they announce was taken in since');
  return removed;
}
