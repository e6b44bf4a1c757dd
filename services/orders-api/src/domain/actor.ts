import type { Mode } from '@pmatch/contracts';

/** The organisation, mode and (when limited to one) bank account that reads and writes stay inside. */
export interface Scope {
  organisationId: string;
  mode: Mode;
  bankAccountId: string | null;
}

/**
 * Who a use case acts for: what they may see and use (`Scope`, `accountIds`), whether they may
 * write, and how their decisions are recorded. The API acts for an API key, the seller console
 * for a person (`console/actor.ts`).
 */
export interface Actor extends Scope {
  permission: 'read_write' | 'read_only';
  /** The bank accounts the actor may see and use, oldest first. */
  accountIds: readonly string[];
  /** Those of `accountIds` that are dedicated transfer accounts. */
  dedicatedAccountIds?: readonly string[];
  /** Who decides, as recorded: `api_key:key_…` or `user:usr_…`. */
  decidedBy: string;
  /** Where a decision came from, as recorded on a payment. */
  trigger: 'api' | 'dashboard';
}
