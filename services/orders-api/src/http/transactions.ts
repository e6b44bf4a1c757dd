import { EmptyRequest, MatchTransactionRequest, TransactionListQuery } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import type { OrdersApiDeps } from '../use-cases/deps';
import { excludeTransaction, matchTransaction, restoreTransaction } from '../use-cases/match-transaction';
import { findVisibleTransaction, getTransaction, getTransactionList } from '../use-cases/read-transactions';
import { actorOf } from './api-key-auth';

export function transactionsRouter(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/v1/transactions', async (req, res) => {
    res.json(await getTransactionList(deps, actorOf(req), parseInput(TransactionListQuery, req.query, 'query')));
  });

  router.get('/v1/transactions/:id', async (req, res) => {
    res.json(await getTransaction(deps, actorOf(req), req.params.id));
  });

  router.post('/v1/transactions/:id/match', async (req, res) => {
    const actor = actorOf(req);
    const transaction = await findVisibleTransaction(deps, actor, req.params.id);
    res.json(await matchTransaction(deps, actor, transaction, parseInput(MatchTransactionRequest, req.body)));
  });

  for (const [action, act] of [
    ['exclude', excludeTransaction],
    ['restore', restoreTransaction],
  ] as const) {
    router.post(`/v1/transactions/:id/${action}`, async (req, res) => {
      const actor = actorOf(req);
      const transaction = await findVisibleTransaction(deps, actor, req.params.id);
      parseInput(EmptyRequest, req.body);
      res.json(await act(deps, actor, transaction));
    });
  }

  return router;
}
