import {
  DepositExplanationReply,
  OrderReply,
  PreviewConfirmedReply,
  QUEUES,
  RulePreviewReply,
  TransactionReply,
  fromWireError,
  type MatcherCommandInput,
  type Order,
  type Transaction,
} from '@pmatch/contracts';
import type { Broker } from '@pmatch/platform';
import type { z } from 'zod';

/** How long a screen waits for a deposit's explanation before it shows the stored one. */
export const EXPLAIN_WAIT_MS = 3000;

/** Requests to the matcher, the only writer of match decisions; a refusal becomes its AppError. */
export class MatcherClient {
  constructor(
    private readonly broker: Broker,
    private readonly timeoutMs: number,
  ) {}

  async orderCommand(command: MatcherCommandInput): Promise<Order> {
    return (await this.ask(command, OrderReply)).order;
  }

  async transactionCommand(command: MatcherCommandInput): Promise<Transaction> {
    return (await this.ask(command, TransactionReply)).transaction;
  }

  async previewRules(command: Extract<MatcherCommandInput, { type: 'rules.preview' }>) {
    return this.ask(command, RulePreviewReply);
  }

  /** A deposit decided again as it stands now; waits `EXPLAIN_WAIT_MS` at most (a page waits for it). */
  async explainDeposit(command: Extract<MatcherCommandInput, { type: 'deposit.explain' }>) {
    return this.ask(command, DepositExplanationReply, Math.min(this.timeoutMs, EXPLAIN_WAIT_MS));
  }

  async confirmPreviewed(command: Extract<MatcherCommandInput, { type: 'rules.confirm_previewed' }>) {
    return this.ask(command, PreviewConfirmedReply);
  }

  private async ask<R extends z.ZodType<{ ok: boolean }>>(
    command: MatcherCommandInput,
    reply: R,
    timeoutMs = this.timeoutMs,
  ): Promise<Extract<z.infer<R>, { ok: true }>> {
    const answer = (await this.broker.request(QUEUES.matcherCommands, command, reply, timeoutMs)) as z.infer<R> & { ok: boolean; error?: unknown };
    if (!answer.ok) throw fromWireError((answer as unknown as { error: Parameters<typeof fromWireError>[0] }).error);
    return answer as Extract<z.infer<R>, { ok: true }>;
  }
}
