import { EventListQuery } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import type { OrdersApiDeps } from '../use-cases/deps';
import { getEventList } from '../use-cases/read-events';
import { actorOf } from './api-key-auth';

export function eventsRouter(deps: OrdersApiDeps): Router {
  const router = Router();
  router.get('/v1/events', async (req, res) => {
    res.json(await getEventList(deps, actorOf(req), parseInput(EventListQuery, req.query, 'query')));
  });
  return router;
}
