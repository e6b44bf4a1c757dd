import { bankAccountView, type PrismaClient } from '@pmatch/db';
import { Router } from 'express';
import { accountsInScope } from '../data/bank-accounts';
import { authOf } from './auth';

export function bankAccountsRouter(deps: { prisma: PrismaClient }): Router {
  const router = Router();
  router.get('/v1/bank-accounts', async (req, res) => {
    const accounts = await accountsInScope(deps.prisma, authOf(req));
    res.json({ object: 'list', data: accounts.map(bankAccountView), has_more: false });
  });
  return router;
}
