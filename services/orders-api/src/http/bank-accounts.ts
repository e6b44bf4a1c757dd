import { AppError, ListQuery } from '@pmatch/contracts';
import { bankAccountView, type PrismaClient } from '@pmatch/db';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import { listAccountsInScope } from '../data/bank-accounts';
import { authOf } from './auth';

export function bankAccountsRouter(deps: { prisma: PrismaClient }): Router {
  const router = Router();
  router.get('/v1/bank-accounts', async (req, res) => {
    const query = parseInput(ListQuery, req.query, 'query');
    const page = await listAccountsInScope(deps.prisma, authOf(req), {
      limit: query.limit,
      ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
    });
    if (page === undefined) throw new AppError('parameter_invalid', `No such bank account: ${query.starting_after}.`, { param: 'starting_after' });
    res.json({ object: 'list', data: page.rows.map(bankAccountView), has_more: page.hasMore });
  });
  return router;
}
