import { sql, preparedQuery, type Sql } from '@pmatch/db';
import { EVENTS_CONSUMER } from './received-events';

const takenInQuery = preparedQuery<{ consumer: string; eventIds: string[] }, { n: number }>(
  'dispatcher.taken_in',
  (p) => sql`SELECT count(DISTINCT message_id)::int AS n FROM inbox WHERE consumer = ${p.consumer} AND message_id = ANY(${p.eventIds}::text[])`,
);

/** Whether every one of the events has been taken in (its inbox row written with its deliveries). */
export async function allTakenIn(db: Sql, eventIds: readonly string[]): Promise<boolean> {
  const ids = [...new Set(eventIds)];
  if (ids.length === 0) return false;
  const [row] = await db.rows(takenInQuery, { consumer: EVENTS_CONSUMER, eventIds: ids });
  return row?.n === ids.length;
}
