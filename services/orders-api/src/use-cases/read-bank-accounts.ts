import type { BankAccount, ListQuery } from '@pmatch/contracts';
import { bankAccountObject } from '@pmatch/db';
import type { z } from 'zod';
import type { Actor } from '../domain/actor';
import { listAccountsInScope } from '../data/bank-accounts';
import type { OrdersApiDeps } from './deps';
import { listOf, type List } from './lists';

/** The bank accounts the actor may see, oldest first. */
export async function getBankAccountList(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor, query: z.infer<typeof ListQuery>): Promise<List<BankAccount>> {
  const page = await listAccountsInScope(deps.database.prisma, actor, {
    limit: query.limit,
    ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
  });
  return listOf(page, bankAccountObject, { what: 'bank account', id: query.starting_after });
}
