import { AppError, EventListQuery } from '@pmatch/contracts';
import { eventView, type PrismaClient } from '@pmatch/db';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import { listEvents } from '../data/events';
import { authOf } from './auth';

export function eventsRouter(deps: { prisma: PrismaClient }): Router {
  const router = Router();
  router.get('/v1/events', async (req, res) => {
    const auth = authOf(req);
    const query = parseInput(EventListQuery, req.query, 'query');
    const page = await listEvents(deps.prisma, auth, {
      limit: query.limit,
      ...(query.type === undefined ? {} : { type: query.type }),
      ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
    });
    if (page === undefined) {
      throw new AppError('parameter_invalid', `No such event: ${query.starting_after}.`, { param: 'starting_after' });
    }
    res.json({
      object: 'list',
      data: page.rows.map(eventView),
      has_more: page.hasMore,
    });
  });
  return router;
}
