import { AppError, QUEUES, type DepositExplanation, type MatcherCommand } from '@pmatch/contracts';
import { reportOutOfScope } from '@pmatch/platform';
import { findAmountCandidates } from '../data/candidates';
import { readDecisionInputs } from '../data/decision-inputs';
import { enabledRules } from '../data/deposit-to-decide';
import { readLaterOrders } from '../data/later-orders';
import { decideUnderRules } from '../domain/decide-under-rules';
import type { MatcherDeps } from './deps';

type Explain = Extract<MatcherCommand, { type: 'deposit.explain' }>;

/**
 * What deciding a held or unmatched deposit would give now: `decide()` under the seller's rules as
 * they are, on its amount candidates as they are, plus the open orders of its account and amount
 * placed after it (which `decide()` lists as `ordered_after_deposit`, never chooses). Changes
 * nothing, takes no lock: it explains, the deposit's stored decision stays what was decided
 * (docs/decisions/0180-explanations-recomputed-when-shown.md). A deposit found only outside the
 * command's organisation and mode is reported as out of scope and answered as missing.
 */
export async function explainDeposit(deps: MatcherDeps, command: Explain, messageId = ''): Promise<DepositExplanation> {
  const scope = { organisationId: command.organisation_id, mode: command.mode };
  const deposit = await deps.prisma.transaction.findFirst({ where: { id: command.transaction_id, ...scope } });
  if (deposit === null) {
    if ((await deps.prisma.transaction.findUnique({ where: { id: command.transaction_id }, select: { id: true } })) !== null) {
      const report = { logger: deps.logger, ...(deps.metrics ? { count: deps.metrics.outOfScope } : {}) };
      reportOutOfScope(
        report,
        QUEUES.matcherCommands,
        messageId,
        `transaction ${command.transaction_id} is not of ${command.organisation_id} (${command.mode})`,
      );
    }
    throw new AppError('resource_missing', `No such transaction: ${command.transaction_id}.`);
  }
  if (deposit.direction !== 'deposit' || (deposit.status !== 'held' && deposit.status !== 'unmatched')) {
    throw new AppError('transaction_not_matchable', `A ${deposit.status} transaction is not decided again.`);
  }
  const [settings, candidates, later] = await Promise.all([
    deps.prisma.setting.findUnique({ where: { organisationId_mode: scope } }),
    findAmountCandidates(deps.prisma, deposit.bankAccountId, deposit.amount, deposit.occurredAt),
    readLaterOrders(deps.prisma, deposit),
  ]);
  const rules = enabledRules(settings?.matchingRules);
  const [inputs] = await readDecisionInputs(deps.prisma, [{ deposit, candidates }]);
  const decision = decideUnderRules(rules, deps.readings, inputs!, { orders: [...candidates.orders, ...later], read: candidates.read }, deps.clock.now());
  return {
    outcome: decision.outcome,
    order_id: decision.outcome === 'confirmed' ? decision.orderId : null,
    matching_rules: rules,
    decision: decision.explanation,
  };
}
