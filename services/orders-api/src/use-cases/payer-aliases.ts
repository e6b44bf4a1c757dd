import { AppError, type PayerAlias, type PayerAliasListQuery } from '@pmatch/contracts';
import { payerAliasObject } from '@pmatch/db';
import type { z } from 'zod';
import type { Actor } from '../domain/actor';
import { deletePayerAlias, listPayerAliases } from '../data/payer-aliases';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { OrdersApiDeps } from './deps';
import { listOf, type List } from './lists';

/** The payers people taught the service (rule `learned_payer`) that the actor may see, newest first. */
export async function getPayerAliasList(
  deps: Pick<OrdersApiDeps, 'database'>,
  actor: Actor,
  query: z.infer<typeof PayerAliasListQuery>,
): Promise<List<PayerAlias>> {
  const slice = await listPayerAliases(deps.database.prisma, actor, {
    limit: query.limit,
    ...(query.bank_account_id === undefined ? {} : { bankAccountId: query.bank_account_id }),
    ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
  });
  return listOf(slice, payerAliasObject, { what: 'payer alias', id: query.starting_after });
}

/** Forgets a taught payer: later deposits under that name are decided without it. A person on the console passes `audit`. */
export async function forgetPayerAlias(
  deps: Pick<OrdersApiDeps, 'database' | 'clock'>,
  actor: Actor,
  id: string,
  audit?: AuditContext,
): Promise<{ id: string; object: 'payer_alias'; deleted: true }> {
  await inAuditedTransaction(
    deps,
    audit,
    async (tx) => {
      if (!(await deletePayerAlias(tx, actor, id))) throw new AppError('resource_missing', `No such payer alias: ${id}.`);
    },
    () => ({ action: 'payer_alias.forget', objectId: id, detail: {} }),
  );
  return { id, object: 'payer_alias', deleted: true };
}
