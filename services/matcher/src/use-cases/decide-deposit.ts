import type { DepositReceived } from '@pmatch/contracts';
import type { TransactionRow } from '@pmatch/db';
import { applyDecision, findTransaction, lockPendingDeposit } from '../data/decisions';
import { decide } from '../domain/decide';
import { depositFacts } from '../domain/deposit';
import { underAccountLock, type MatcherDeps } from './deps';

export type DecideDepositDeps = MatcherDeps;

export const DEPOSITS_CONSUMER = 'matcher.deposits';

/**
 * The use case behind `deposit.received`: under the account's lock, decide the pending deposit and
 * write the decision with its events in one DB transaction. Idempotent: a message seen before, or
 * a deposit already decided, changes nothing. Resolves with the deposit as it now stands.
 * Plain SQL, not Prisma: this runs once per deposit, and Prisma's client would be most of its CPU.
 */
export async function decideDeposit(deps: MatcherDeps, message: DepositReceived, messageId: string): Promise<TransactionRow> {
  return underAccountLock(deps, message.bank_account_id, () =>
    deps.database.transaction(async (sql) => {
      const pending = await lockPendingDeposit(sql, message.transaction_id, { consumer: DEPOSITS_CONSUMER, messageId });
      if (pending === undefined) return findTransaction(sql, message.transaction_id);
      const { deposit, nameMatcher, candidates } = pending;
      const now = deps.clock.now();
      const decision = decide(depositFacts(deposit), candidates.orders, nameMatcher, now, candidates.read);
      return applyDecision(sql, deposit, decision, { publicBaseUrl: deps.publicBaseUrl, now });
    }),
  );
}
