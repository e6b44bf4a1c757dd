import { QUEUES, TransactionReply, fromWireError, type CreateTestDepositCommand, type Transaction } from '@pmatch/contracts';
import type { Broker } from '@pmatch/platform';

/** Requests to bank-ingest, which stores every deposit; a refusal becomes its AppError. */
export class BankIngestClient {
  constructor(
    private readonly broker: Broker,
    private readonly timeoutMs: number,
  ) {}

  /** Resolves with the deposit once the matcher has decided it. */
  async createTestDeposit(command: CreateTestDepositCommand): Promise<Transaction> {
    const reply = await this.broker.request(QUEUES.bankIngestCommands, command, TransactionReply, this.timeoutMs);
    if (!reply.ok) throw fromWireError(reply.error);
    return reply.transaction;
  }
}
