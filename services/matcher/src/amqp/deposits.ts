import type { DepositReceived, TransactionReply } from '@pmatch/contracts';
import { transactionView } from '@pmatch/db';
import type { Broker, Delivery } from '@pmatch/platform';
import { depositDecider, type DecideDepositDeps } from '../use-cases/decide-deposit';

/** `deposit.received` → decide; then answer the requester of a test deposit, if there is one. */
export function depositHandler(deps: DecideDepositDeps & { broker: Broker }) {
  const decideDeposit = depositDecider(deps);
  return async (delivery: Delivery<DepositReceived>): Promise<void> => {
    const transaction = await decideDeposit(delivery.body, delivery.messageId);
    const replyTo = delivery.body.reply_to;
    if (replyTo !== undefined) {
      const reply: TransactionReply = { ok: true, transaction: transactionView(transaction) };
      await deps.broker.reply(replyTo.queue, replyTo.correlation_id, reply);
    }
  };
}
