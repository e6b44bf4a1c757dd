import { AppError, type ApiKeyPermission } from '@pmatch/contracts';
import { insertApiKey, type ApiKeyRow, type BankAccountRow } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { ownAccountsOf } from '../data/bank-accounts';
import { listApiKeys, revokeKey } from '../data/keys';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { OrdersApiDeps } from './deps';
import { keepToShowOnce, type ShowTo } from './shown-once';

export async function getApiKeys(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor): Promise<ApiKeyRow[]> {
  return listApiKeys(deps.database.prisma, actor);
}

/** The keys of the actor's organisation and mode, and the accounts a new key may be scoped to: its own, never a dedicated one. */
export async function getApiKeysAndScopes(
  deps: Pick<OrdersApiDeps, 'database'>,
  actor: Actor,
): Promise<{ keys: ApiKeyRow[]; scopeAccounts: BankAccountRow[] }> {
  const [keys, scopeAccounts] = await Promise.all([
    listApiKeys(deps.database.prisma, actor),
    ownAccountsOf(deps.database.prisma, actor.organisationId, actor.mode),
  ]);
  return { keys, scopeAccounts };
}

export interface IssueKeyRequest {
  name: string;
  permission: ApiKeyPermission;
  /** Live keys only. */
  bankAccountId: string | null;
}

/**
 * Issues a key of the actor's organisation and mode; its text is in the answer and nowhere else, or,
 * for the console (`showTo`), kept sealed to be shown once to that session by the page the action
 * redirects to (`displayId`), in the transaction that makes the key.
 */
export async function issueApiKey(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'secretBox'>,
  actor: Actor,
  request: IssueKeyRequest,
  audit?: AuditContext,
  showTo?: ShowTo,
): Promise<{ row: ApiKeyRow; keyText: string; displayId?: string }> {
  const name = request.name.trim();
  if (name === '' || name.length > KEY_NAME_MAX) throw new AppError('parameter_invalid', 'A key needs a name of 1 to 100 characters.', { param: 'name' });
  if (request.bankAccountId !== null && !actor.accountIds.includes(request.bankAccountId)) {
    throw new AppError('parameter_invalid', `No such bank account: ${request.bankAccountId}.`, { param: 'bank_account_id' });
  }
  if (request.bankAccountId !== null && actor.dedicatedAccountIds?.includes(request.bankAccountId) === true) {
    throw new AppError('parameter_invalid', 'A key is scoped to one of your own bank accounts, not to a dedicated transfer account.', {
      param: 'bank_account_id',
    });
  }
  return inAuditedTransaction(
    deps,
    audit,
    async (tx) => {
      const organisation = await tx.organisation.findUniqueOrThrow({ where: { id: actor.organisationId }, select: { id: true, name: true } });
      const issued = await insertApiKey(tx, organisation, {
        organisationId: actor.organisationId,
        mode: actor.mode,
        name,
        permission: request.permission,
        bankAccountId: request.bankAccountId,
      });
      if (showTo === undefined) return issued;
      return { ...issued, displayId: await keepToShowOnce(deps, tx, showTo, 'api_key', { keyText: issued.keyText, name: issued.row.name }) };
    },
    ({ row }) => ({ action: 'api_key.issue', objectId: row.id, detail: { name: row.name, permission: row.permission, bank_account_id: row.bankAccountId } }),
  );
}

/** Revokes a key; the next request with it is refused (401), cached or not (docs/decisions/0012-cached-api-keys-checked-by-the-write.md). */
export async function revokeApiKey(deps: Pick<OrdersApiDeps, 'database' | 'clock'>, actor: Actor, keyId: string, audit?: AuditContext): Promise<void> {
  await inAuditedTransaction(
    deps,
    audit,
    async (tx) => {
      if (!(await revokeKey(tx, actor, keyId, deps.clock.now()))) throw new AppError('resource_missing', `No such API key: ${keyId}.`);
    },
    () => ({ action: 'api_key.revoke', objectId: keyId, detail: {} }),
  );
}

export const KEY_NAME_MAX = 100;
