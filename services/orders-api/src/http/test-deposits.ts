import { CreateTestDepositRequest } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import { assertMayCreateTestDeposits, createTestDeposit } from '../use-cases/create-test-deposit';
import type { OrdersApiDeps } from '../use-cases/deps';
import { actorOf } from './api-key-auth';

export function testDepositsRouter(deps: OrdersApiDeps): Router {
  const router = Router();
  router.post('/v1/test/deposits', async (req, res) => {
    const actor = actorOf(req);
    // A live key is told there is no such endpoint, whatever its body.
    assertMayCreateTestDeposits(actor);
    res.status(201).json(await createTestDeposit(deps, actor, parseInput(CreateTestDepositRequest, req.body)));
  });
  return router;
}
