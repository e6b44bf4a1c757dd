import { OrderReply, QUEUES, TransactionReply, fromWireError, type MatcherCommand, type Order, type Transaction } from '@pmatch/contracts';
import type { Broker } from '@pmatch/platform';

/** Requests to the matcher, the only writer of match decisions; a refusal becomes its AppError. */
export class MatcherClient {
  constructor(
    private readonly broker: Broker,
    private readonly timeoutMs: number,
  ) {}

  async orderCommand(command: MatcherCommand): Promise<Order> {
    const reply = await this.broker.request(QUEUES.matcherCommands, command, OrderReply, this.timeoutMs);
    if (!reply.ok) throw fromWireError(reply.error);
    return reply.order;
  }

  async transactionCommand(command: MatcherCommand): Promise<Transaction> {
    const reply = await this.broker.request(QUEUES.matcherCommands, command, TransactionReply, this.timeoutMs);
    if (!reply.ok) throw fromWireError(reply.error);
    return reply.transaction;
  }
}
