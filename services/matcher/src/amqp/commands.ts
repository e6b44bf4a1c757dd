import { AppError, toWireError, type MatcherCommand } from '@pmatch/contracts';
import type { Broker, Delivery } from '@pmatch/platform';
import { resultView, runCommand } from '../use-cases/commands';
import type { MatcherDeps } from '../use-cases/deps';

/**
 * `matcher.commands`: requests from orders-api and ops. A refusal (an AppError: 409, 404) is an
 * answer, sent back; anything else is a failure, retried by the broker.
 */
export function commandHandler(deps: MatcherDeps & { broker: Broker; onRecorded: () => void }) {
  return async (delivery: Delivery<MatcherCommand>): Promise<void> => {
    let reply: object;
    try {
      const result = await runCommand(deps, delivery.body, delivery.messageId);
      deps.onRecorded();
      reply = { ok: true, ...resultView(result, deps.publicBaseUrl) };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      reply = { ok: false, error: toWireError(error) };
    }
    if (delivery.replyTo !== undefined && delivery.correlationId !== undefined) {
      await deps.broker.reply(delivery.replyTo, delivery.correlationId, reply);
    }
  };
}
