import { AppError, toWireError, type MatcherCommand } from '@pmatch/contracts';
import { pastDeadline, type Broker, type Delivery } from '@pmatch/platform';
import { CommandExpiredError, resultView, runCommand } from '../use-cases/commands';
import type { MatcherDeps } from '../use-cases/deps';
import { explainDeposit } from '../use-cases/explain-deposit';
import { confirmPreviewed, previewRules } from '../use-cases/rule-preview';

/**
 * `matcher.commands`: requests from orders-api and ops. A refusal (an AppError: 409, 404) is an
 * answer, sent back; a command whose caller stopped waiting is dropped unanswered (the broker
 * already drops those that arrive late); anything else is a failure, retried by the broker.
 */
export function commandHandler(deps: MatcherDeps & { broker: Broker; onRecorded: () => void }) {
  return async (delivery: Delivery<MatcherCommand>): Promise<void> => {
    const command = delivery.body;
    const callerWaits = () => !pastDeadline(delivery);
    let reply: object;
    try {
      if (command.type === 'rules.preview') {
        reply = { ok: true, ...(await previewRules(deps, command)) };
      } else if (command.type === 'deposit.explain') {
        reply = { ok: true, ...(await explainDeposit(deps, command, delivery.messageId)) };
      } else if (command.type === 'rules.confirm_previewed') {
        reply = { ok: true, ...(await confirmPreviewed(deps, command, callerWaits)) };
        deps.onRecorded();
      } else {
        const result = await runCommand(deps, command, delivery.messageId, callerWaits);
        deps.onRecorded();
        reply = { ok: true, ...resultView(result, deps.publicBaseUrl) };
      }
    } catch (error) {
      if (error instanceof CommandExpiredError) {
        deps.logger.warn({ messageId: delivery.messageId, type: command.type }, 'command past its deadline dropped: its caller has answered 503');
        return;
      }
      if (!(error instanceof AppError)) throw error;
      reply = { ok: false, error: toWireError(error) };
    }
    if (delivery.replyTo !== undefined && delivery.correlationId !== undefined) {
      await deps.broker.reply(delivery.replyTo, delivery.correlationId, reply);
    }
  };
}
