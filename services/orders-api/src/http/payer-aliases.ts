import { PayerAliasListQuery } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import type { OrdersApiDeps } from '../use-cases/deps';
import { forgetPayerAlias, getPayerAliasList } from '../use-cases/payer-aliases';
import { actorOf } from './api-key-auth';

export function payerAliasesRouter(deps: OrdersApiDeps): Router {
  const router = Router();
  router.get('/v1/payer-aliases', async (req, res) => {
    res.json(await getPayerAliasList(deps, actorOf(req), parseInput(PayerAliasListQuery, req.query, 'query')));
  });
  router.delete('/v1/payer-aliases/:id', async (req, res) => {
    res.json(await forgetPayerAlias(deps, actorOf(req), req.params.id));
  });
  return router;
}
