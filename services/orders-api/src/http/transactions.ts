import { AppError, EmptyRequest, MatchTransactionRequest, TransactionId, TransactionListQuery } from '@pmatch/contracts';
import { transactionView, type PrismaClient, type TransactionRow } from '@pmatch/db';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import type { AuthContext } from '../domain/auth';
import { findOrder } from '../data/orders';
import { findTransaction, listTransactions } from '../data/transactions';
import { authOf } from './auth';
import { pathId } from './ids';
import type { MatcherClient } from './matcher-client';

export function transactionsRouter(deps: { prisma: PrismaClient; matcher: MatcherClient }): Router {
  const router = Router();

  router.get('/v1/transactions', async (req, res) => {
    const query = parseInput(TransactionListQuery, req.query, 'query');
    const page = await listTransactions(deps.prisma, authOf(req), {
      limit: query.limit,
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
    });
    if (page === undefined) throw new AppError('parameter_invalid', `No such transaction: ${query.starting_after}.`, { param: 'starting_after' });
    res.json({ object: 'list', data: page.rows.map(transactionView), has_more: page.hasMore });
  });

  router.get('/v1/transactions/:id', async (req, res) => {
    res.json(transactionView(await visibleTransaction(deps.prisma, authOf(req), req.params.id)));
  });

  router.post('/v1/transactions/:id/match', async (req, res) => {
    const auth = authOf(req);
    const transaction = await visibleTransaction(deps.prisma, auth, req.params.id);
    const request = parseInput(MatchTransactionRequest, req.body);
    // An order outside the key's scope is as unknown as one that does not exist.
    if ((await findOrder(deps.prisma, auth, request.order_id)) === null) {
      throw new AppError('parameter_invalid', `No such order: ${request.order_id}.`, { param: 'order_id' });
    }
    res.json(
      await deps.matcher.transactionCommand({
        type: 'transaction.match',
        organisation_id: auth.organisationId,
        mode: auth.mode,
        transaction_id: transaction.id,
        order_id: request.order_id,
      }),
    );
  });

  for (const action of ['exclude', 'restore'] as const) {
    router.post(`/v1/transactions/:id/${action}`, async (req, res) => {
      const auth = authOf(req);
      const transaction = await visibleTransaction(deps.prisma, auth, req.params.id);
      parseInput(EmptyRequest, req.body);
      res.json(
        await deps.matcher.transactionCommand({
          type: `transaction.${action}`,
          organisation_id: auth.organisationId,
          mode: auth.mode,
          transaction_id: transaction.id,
        }),
      );
    });
  }

  return router;
}

async function visibleTransaction(prisma: PrismaClient, auth: AuthContext, rawId: string | undefined): Promise<TransactionRow> {
  const id = pathId(TransactionId, rawId, 'transaction');
  const row = await findTransaction(prisma, auth, id);
  if (row === null) throw new AppError('resource_missing', `No such transaction: ${id}.`, { param: 'id' });
  return row;
}
