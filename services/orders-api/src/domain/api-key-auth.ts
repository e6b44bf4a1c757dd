import { API_KEY_PATTERN, AppError, type Mode } from '@pmatch/contracts';
import type { Actor } from './actor';

/** Who is calling: resolved from the API key on every /v1 request. */
export interface ApiKeyAuth {
  keyId: string;
  organisationId: string;
  mode: Mode;
  permission: 'read_write' | 'read_only';
  /** A live key may be limited to one bank account. */
  bankAccountId: string | null;
  /**
   * The bank accounts the key may see and use when the request began, oldest first: its one
   * scoped account, or every account of its organisation and mode. Read with the key.
   */
  accountIds: readonly string[];
  /** Those of `accountIds` that are dedicated transfer accounts (given to orders, never a default). */
  dedicatedAccountIds?: readonly string[];
  /** SHA-256 of the key text: how the key is looked up. */
  keyHash: string;
  /**
   * True when the key was taken from this process's cache of keys instead of being read for this
   * request. Only a request whose write checks the key itself may be so (see `ApiKeys`).
   */
  cached: boolean;
}

/** What the use cases see of a request's API key. */
export function apiKeyActor(auth: ApiKeyAuth): Actor {
  return {
    organisationId: auth.organisationId,
    mode: auth.mode,
    permission: auth.permission,
    bankAccountId: auth.bankAccountId,
    accountIds: auth.accountIds,
    dedicatedAccountIds: auth.dedicatedAccountIds ?? [],
    decidedBy: `api_key:${auth.keyId}`,
    trigger: 'api',
  };
}

/**
 * bank_account_id may be omitted only when exactly one account that is not a dedicated transfer
 * account is in reach; a given one must be in reach, and may be a dedicated one only where
 * `dedicatedAllowed` (a test deposit): orders get theirs with `dedicated_account: true`.
 */
export function resolveBankAccount(
  actor: Pick<Actor, 'accountIds' | 'dedicatedAccountIds'>,
  requested: string | undefined,
  options: { dedicatedAllowed?: boolean } = {},
): string {
  const dedicated = actor.dedicatedAccountIds ?? [];
  if (requested !== undefined) {
    if (!actor.accountIds.includes(requested)) {
      throw new AppError('parameter_invalid', `No such bank account: ${requested}.`, { param: 'bank_account_id' });
    }
    if (dedicated.includes(requested) && options.dedicatedAllowed !== true) {
      throw new AppError('parameter_invalid', `${requested} is a dedicated transfer account: orders get one with dedicated_account: true.`, {
        param: 'bank_account_id',
      });
    }
    return requested;
  }
  const accounts = actor.accountIds.filter((id) => !dedicated.includes(id));
  const only = accounts.length === 1 ? accounts[0] : undefined;
  if (only === undefined) {
    throw new AppError(
      'parameter_missing',
      accounts.length === 0
        ? "No bank account is in this key's scope; bank_account_id is required."
        : "Several bank accounts are in this key's scope; say which with bank_account_id.",
      { param: 'bank_account_id' },
    );
  }
  return only;
}

/** The key text of an `Authorization: Bearer <key>` header, or undefined when malformed. */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer ([^\s]+)$/.exec(header.trim());
  const key = match?.[1];
  return key !== undefined && API_KEY_PATTERN.test(key) ? key : undefined;
}

export const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
