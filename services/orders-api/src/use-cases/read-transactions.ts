import { AppError, TransactionId, type Transaction, type TransactionListQuery } from '@pmatch/contracts';
import { transactionObject, type TransactionRow } from '@pmatch/db';
import type { z } from 'zod';
import type { Actor } from '../domain/actor';
import { wellFormedId } from '../domain/ids';
import { findTransaction, listTransactions } from '../data/transactions';
import type { OrdersApiDeps } from './deps';
import { listOf, type List } from './lists';

/** The transaction with this id if the actor may see it, else 404. */
export async function findVisibleTransaction(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor, rawId: string | undefined): Promise<TransactionRow> {
  const id = wellFormedId(TransactionId, rawId, 'transaction');
  const row = await findTransaction(deps.database.prisma, actor, id);
  if (row === null) throw new AppError('resource_missing', `No such transaction: ${id}.`, { param: 'id' });
  return row;
}

export async function getTransaction(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor, rawId: string | undefined): Promise<Transaction> {
  return transactionObject(await findVisibleTransaction(deps, actor, rawId));
}

/** Transactions newest first. */
export async function getTransactionList(
  deps: Pick<OrdersApiDeps, 'database'>,
  actor: Actor,
  query: z.infer<typeof TransactionListQuery>,
): Promise<List<Transaction>> {
  const page = await listTransactions(deps.database.prisma, actor, {
    limit: query.limit,
    ...(query.status === undefined ? {} : { status: query.status }),
    ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
  });
  return listOf(page, transactionObject, { what: 'transaction', id: query.starting_after });
}
