import { AppError } from '@pmatch/contracts';
import { insertLiveBankAccounts } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import type { DedicatedAccountState, DedicatedAccountsAddition } from '../domain/dedicated-accounts';
import { listDedicatedPool, type DedicatedAccountListed } from '../data/dedicated-accounts';
import type { FailureThrottle } from '../data/login-throttle';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { ConsoleDeps } from './console-login';
import { confirmPassword, type Reentry } from './console-reauthenticate';
import type { OrdersApiDeps } from './deps';

/** The most dedicated accounts the console's page lists (the counts are of all of them). */
export const DEDICATED_ACCOUNTS_LISTED_MAX = 500;

/** The dedicated accounts of the actor's organisation and mode, by number, and how many stand in each state now. */
export async function getDedicatedPool(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'dedicatedAccountRestMs'>,
  actor: Actor,
): Promise<{ accounts: DedicatedAccountListed[]; counts: Record<DedicatedAccountState, number>; total: number }> {
  const restedSince = new Date(deps.clock.now().getTime() - deps.dedicatedAccountRestMs);
  const pool = await listDedicatedPool(deps.database.prisma, actor, restedSince, DEDICATED_ACCOUNTS_LISTED_MAX);
  const total = Object.values(pool.counts).reduce((sum, n) => sum + n, 0);
  return { ...pool, total };
}

/** How an addition went: the password again refused, numbers the organisation already has (nothing added), or how many were added. */
export type DedicatedAccountsAdded =
  { outcome: Exclude<Reentry, 'confirmed'> } | { outcome: 'already_registered'; accountNumbers: string[] } | { outcome: 'done'; added: number };

/**
 * Adds dedicated transfer accounts to the live pool of the admin's organisation, once they have
 * typed their password again: all in one transaction with its audit row, or none when the
 * organisation already has one of the numbers at that bank, branch and type (the refusal is
 * audited too). Test mode's pool is fixed.
 */
export async function addDedicatedAccounts(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  audit: AuditContext,
  addition: DedicatedAccountsAddition,
  password: string,
): Promise<DedicatedAccountsAdded> {
  if (audit.mode !== 'live') throw new AppError('parameter_invalid', 'Dedicated accounts are added in live mode; the test pool is fixed.');
  const reentry = await confirmPassword(deps, throttle, audit, password);
  if (reentry !== 'confirmed') return { outcome: reentry };
  const numbers = addition.accountNumbers;
  const detail = {
    count: numbers.length,
    first_number: numbers[0],
    last_number: numbers[numbers.length - 1],
    bank_code: addition.bankCode,
    branch_code: addition.branchCode,
    account_type: addition.accountType,
    holder_name: addition.holderName,
  };
  const added = await inAuditedTransaction(
    deps,
    audit,
    (tx) => insertLiveBankAccounts(tx, { organisationId: audit.organisationId, ...addition, accountNumbers: numbers, dedicated: true }),
    (result) => ({
      action: 'dedicated_accounts.add',
      objectId: null,
      detail:
        result.outcome === 'added'
          ? { ...detail, outcome: 'done' }
          : { ...detail, outcome: 'refused', already_registered: result.accountNumbers.slice(0, 100) },
    }),
  );
  return added.outcome === 'added' ? { outcome: 'done', added: added.accounts.length } : added;
}
