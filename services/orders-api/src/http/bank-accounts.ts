import { ListQuery } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import type { OrdersApiDeps } from '../use-cases/deps';
import { getBankAccountList } from '../use-cases/read-bank-accounts';
import { actorOf } from './api-key-auth';

export function bankAccountsRouter(deps: OrdersApiDeps): Router {
  const router = Router();
  router.get('/v1/bank-accounts', async (req, res) => {
    res.json(await getBankAccountList(deps, actorOf(req), parseInput(ListQuery, req.query, 'query')));
  });
  return router;
}
