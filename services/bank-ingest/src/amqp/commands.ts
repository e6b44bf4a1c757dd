import { AppError, toWireError, type BankIngestCommand, type TransactionReply } from '@pmatch/contracts';
import { transactionObject, type Database } from '@pmatch/db';
import { pastDeadline, type Broker, type Clock, type Delivery, type Logger, type OutboxPublisher } from '@pmatch/platform';
import { testDepositReference } from '../domain/transaction';
import type { IngestMetrics } from '../use-cases/metrics';
import { TransactionStore, findBankAccount } from '../data/transactions';

export interface CommandDeps {
  database: Database;
  broker: Broker;
  clock: Clock;
  logger: Logger;
  outbox: OutboxPublisher;
  metrics?: IngestMetrics;
}

/**
 * Test deposits take the bank notification's storing path. The matcher answers the requester
 * once it has decided; bank-ingest answers only when there is nothing for the matcher to decide
 * (an error, or a redelivered request whose deposit is already decided). A request whose caller
 * stopped waiting is not stored: the caller answered 503 and its retry stores the deposit.
 */
export function commandHandler(deps: CommandDeps) {
  const transactions = new TransactionStore(deps.database, deps.outbox);
  return async (delivery: Delivery<BankIngestCommand>): Promise<void> => {
    const { body, replyTo, correlationId } = delivery;
    const reply = async (message: TransactionReply) => {
      if (replyTo !== undefined && correlationId !== undefined) await deps.broker.reply(replyTo, correlationId, message);
    };
    const account = await findBankAccount(deps.database.prisma, body.bank_account_id);
    if (account === null || account.organisationId !== body.organisation_id || account.mode !== 'test') {
      await reply({ ok: false, error: toWireError(new AppError('parameter_invalid', 'No such test bank account.', { param: 'bank_account_id' })) });
      return;
    }
    // The broker dropped it if it arrived late; this catches a deadline that passed while the account was read.
    if (pastDeadline(delivery)) {
      deps.logger.warn({ messageId: delivery.messageId }, 'test deposit past its deadline not stored: its caller has answered 503');
      return;
    }
    const stored = await transactions.store(
      {
        organisationId: account.organisationId,
        mode: 'test',
        bankAccountId: account.id,
        bankReference: testDepositReference(delivery.messageId),
        direction: 'deposit',
        amount: body.amount,
        counterparty: body.counterparty,
        occurredAt: new Date(body.occurred_at),
        ...(replyTo !== undefined && correlationId !== undefined ? { replyTo: { queue: replyTo, correlation_id: correlationId } } : {}),
      },
      deps.clock.now(),
    );
    if (!stored.duplicate) deps.metrics?.depositsIngested('test');
    if (stored.duplicate && stored.transaction.status !== 'pending') {
      await reply({ ok: true, transaction: transactionObject(stored.transaction) });
    }
  };
}
