import { QUEUES, type DepositReceived, type TransactionReply } from '@pmatch/contracts';
import { transactionObject } from '@pmatch/db';
import { OutOfScopeError, reportOutOfScope, type Broker, type Delivery } from '@pmatch/platform';
import { depositDecider, type DecideDepositDeps } from '../use-cases/decide-deposit';

/**
 * `deposit.received` → decide; then answer the requester of a test deposit, if there is one. A
 * message naming a transaction not on its bank account is acknowledged unanswered, having changed
 * nothing, and reported.
 */
export function depositHandler(deps: DecideDepositDeps & { broker: Broker }) {
  const decideDeposit = depositDecider(deps);
  const report = { logger: deps.logger, ...(deps.metrics ? { count: deps.metrics.outOfScope } : {}) };
  return async (delivery: Delivery<DepositReceived>): Promise<void> => {
    let transaction;
    try {
      transaction = await decideDeposit(delivery.body, delivery.messageId);
    } catch (error) {
      if (!(error instanceof OutOfScopeError)) throw error;
      reportOutOfScope(report, QUEUES.matcherDeposits, delivery.messageId, error.message);
      return;
    }
    const replyTo = delivery.body.reply_to;
    if (replyTo !== undefined) {
      const reply: TransactionReply = { ok: true, transaction: transactionObject(transaction) };
      await deps.broker.reply(replyTo.queue, replyTo.correlation_id, reply);
    }
  };
}
