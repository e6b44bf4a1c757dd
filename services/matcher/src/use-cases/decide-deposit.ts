import type { DepositReceived } from '@pmatch/contracts';
import type { TransactionRow } from '@pmatch/db';
import { claimMessage } from '@pmatch/platform';
import { applyDecision, findAmountCandidates, lockPendingDeposit } from '../data/decisions';
import { decide } from '../domain/decide';
import { depositFacts } from '../domain/deposit';
import { underAccountLock, type MatcherDeps } from './deps';

export type DecideDepositDeps = MatcherDeps;

export const DEPOSITS_CONSUMER = 'matcher.deposits';

/**
 * The use case behind `deposit.received`: under the account's lock, decide the pending deposit and
 * write the decision with its events in one DB transaction. Idempotent: a message seen before, or
 * a deposit already decided, changes nothing. Resolves with the deposit as it now stands.
 */
export async function decideDeposit(deps: MatcherDeps, message: DepositReceived, messageId: string): Promise<TransactionRow> {
  return underAccountLock(deps, message.bank_account_id, () =>
    deps.prisma.$transaction(async (tx) => {
      const firstTime = await claimMessage(tx, DEPOSITS_CONSUMER, messageId);
      const pending = firstTime ? await lockPendingDeposit(tx, message.transaction_id) : undefined;
      if (pending === undefined) return tx.transaction.findUniqueOrThrow({ where: { id: message.transaction_id } });
      const { deposit, nameMatcher } = pending;
      const now = deps.clock.now();
      const candidates = await findAmountCandidates(tx, deposit.bankAccountId, deposit.amount, deposit.occurredAt);
      const decision = decide(depositFacts(deposit), candidates.orders, nameMatcher, now, candidates.read);
      return applyDecision(tx, deposit, decision, { publicBaseUrl: deps.publicBaseUrl, now });
    }),
  );
}
