import type { DepositReceived } from '@pmatch/contracts';
import type { OutboxHandOver, TransactionRow } from '@pmatch/db';
import { OutOfScopeError } from '@pmatch/platform';
import { writeDecisionInBatches } from '../data/decisions-batched';
import { readDeposit } from '../data/deposit-to-decide';
import { decide } from '../domain/decide';
import { depositFacts } from '../domain/deposit';
import { underAccountLock, type MatcherDeps } from './deps';

export type DecideDepositDeps = MatcherDeps & {
  /** Takes the decisions' announcements once written (the outbox relay's `publishLeased`). */
  handOver: OutboxHandOver;
};

export const DEPOSITS_CONSUMER = 'matcher.deposits';

/** Decides the deposit of one `deposit.received` message; resolves with the deposit as it now stands. */
export type DepositDecider = (message: DepositReceived, messageId: string) => Promise<TransactionRow>;

/**
 * The use case behind `deposit.received`: under the account's lock, read the pending deposit with
 * its candidates, decide, and write the decision with its events (decided again if the rows
 * changed since the read; docs/decisions/0008-decision-written-as-one-conditional-statement.md).
 * Idempotent: a message seen before, or a deposit already decided, changes nothing. A message
 * whose transaction is not on the bank account it names (so not of that account's organisation
 * and mode), or does not exist, changes nothing either: OutOfScopeError.
 */
export function depositDecider(deps: DecideDepositDeps): DepositDecider {
  const writeDecision = writeDecisionInBatches(deps.database.sql, deps.handOver);
  return (message, messageId) => {
    const claim = { consumer: DEPOSITS_CONSUMER, messageId };
    return underAccountLock(deps, message.bank_account_id, async () => {
      const startedAt = deps.clock.now();
      const { transaction, pending } = await readDeposit(deps.database.sql, message.transaction_id, claim);
      // The lock taken is the named account's: deciding a deposit of another would be unserialised.
      if (transaction.bankAccountId !== message.bank_account_id) {
        throw new OutOfScopeError(`transaction ${transaction.id} is not on bank account ${message.bank_account_id}`);
      }
      if (pending === undefined) return transaction;
      const { deposit, nameMatcher, candidates } = pending;
      const now = deps.clock.now();
      const decision = decide(depositFacts(deposit), candidates.orders, nameMatcher, now, candidates.read);
      const written = await writeDecision({ pending, decision, claim, ctx: { publicBaseUrl: deps.publicBaseUrl, now, startedAt } });
      if (written.status === decision.outcome) {
        deps.logger.info({ transactionId: written.id, outcome: decision.outcome, reason: decision.explanation.reason }, 'deposit decided');
        deps.metrics?.decided(decision.outcome, decision.explanation.reason, (now.getTime() - deposit.createdAt.getTime()) / 1000);
      }
      return written;
    });
  };
}
