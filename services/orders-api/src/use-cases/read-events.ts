import type { Event, EventListQuery } from '@pmatch/contracts';
import { eventObject } from '@pmatch/db';
import type { z } from 'zod';
import type { Actor } from '../domain/actor';
import { listEvents } from '../data/events';
import type { OrdersApiDeps } from './deps';
import { listOf, type List } from './lists';

/** Events in the order they were recorded, oldest first (see `listEvents`). */
export async function getEventList(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor, query: z.infer<typeof EventListQuery>): Promise<List<Event>> {
  const page = await listEvents(deps.database.prisma, actor, {
    limit: query.limit,
    ...(query.type === undefined ? {} : { type: query.type }),
    ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
  });
  return listOf(page, eventObject, { what: 'event', id: query.starting_after });
}
