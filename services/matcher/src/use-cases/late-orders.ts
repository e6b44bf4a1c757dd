import { QUEUES, orderRegistrationId, type OrderRegistered } from '@pmatch/contracts';
import { orderObject, transactionObject } from '@pmatch/db';
import { BatchWriter, claimMessage, reportOutOfScope } from '@pmatch/platform';
import { findAmountCandidates } from '../data/candidates';
import { confirmDeposit, recordEventsFor, setDepositStatus } from '../data/conditional-writes';
import { readDecisionInputs } from '../data/decision-inputs';
import { enabledRules } from '../data/deposit-to-decide';
import { lockUnmatchedDeposits, settleWithoutDeposit, type RegisteredOrder, type Settlement } from '../data/late-orders';
import { decideUnderRules } from '../domain/decide-under-rules';
import { lateOrderOutcomes } from '../domain/late-orders';
import { AUTOMATIC } from '../domain/payments';
import { underAccountLock, type MatcherDeps } from './deps';

export const LATE_ORDERS_CONSUMER = 'matcher.late-orders';

/** At most this many late-order messages settled by one statement. */
const SETTLED_PER_STATEMENT = 200;

/** Examines the orders of one `order.registered` message; resolves with whether it recorded events. */
export type LateOrderExaminer = (orders: readonly OrderRegistered[]) => Promise<boolean>;

/**
 * A newly registered order re-examines the unmatched deposits it could explain, with the same
 * decision as a new deposit (held unless auto-confirmation is on and one deposit fits). Orders no
 * deposit waits for are settled in batches without the account's lock
 * (docs/decisions/0013-late-order-check-without-the-account-lock.md); the rest under it, one by one.
 * An order not on the bank account its message names (so possibly another seller's, and under
 * another account's lock) is left alone and reported as out of scope.
 */
export function lateOrderExaminer(deps: MatcherDeps): LateOrderExaminer {
  const settledWithoutLock = new BatchWriter(
    (messages: RegisteredOrder[]): Promise<Settlement[]> => settleWithoutDeposit(deps.database.sql, 'pending or unmatched', LATE_ORDERS_CONSUMER, messages),
    SETTLED_PER_STATEMENT,
  );
  const report = { logger: deps.logger, ...(deps.metrics ? { count: deps.metrics.outOfScope } : {}) };
  return async (orders) => {
    const checks = orders.map((order) => ({ order, messageId: orderRegistrationId(order.order_id) }));
    const settled = await settledWithoutLock.submitAll(
      checks.map(({ order, messageId }) => ({ orderId: order.order_id, bankAccountId: order.bank_account_id, messageId })),
    );
    let recorded = false;
    for (const [i, { order, messageId }] of checks.entries()) {
      if (settled[i] === 'out of scope')
        reportOutOfScope(report, QUEUES.matcherLateOrders, messageId, `order ${order.order_id} is not on bank account ${order.bank_account_id}`);
      if (settled[i] !== 'waited for') continue;
      if (await underAccountLock(deps, order.bank_account_id, () => examineUnderLock(deps, order, messageId))) recorded = true;
    }
    return recorded;
  };
}

async function examineUnderLock(deps: MatcherDeps, message: OrderRegistered, messageId: string): Promise<boolean> {
  // Under the lock a decision in progress has committed: only unmatched deposits wait now (a
  // pending one not yet decided will see the order).
  const [settled] = await settleWithoutDeposit(deps.database.sql, 'unmatched', LATE_ORDERS_CONSUMER, [
    { orderId: message.order_id, bankAccountId: message.bank_account_id, messageId },
  ]);
  if (settled !== 'waited for') return false;
  return deps.prisma.$transaction(async (tx) => {
    if (!(await claimMessage(tx, LATE_ORDERS_CONSUMER, messageId))) return false;
    const order = await tx.order.findUnique({ where: { id: message.order_id } });
    if (order === null || order.status !== 'open' || order.bankAccountId !== message.bank_account_id) return false;
    const deposits = await lockUnmatchedDeposits(tx, order.bankAccountId, order.amount, order.orderedAt);
    if (deposits.length === 0) return false;
    const now = deps.clock.now();
    // One read for every deposit: the latest one's time bounds them all; decide() leaves out, per
    // deposit, the orders placed after it.
    const latest = new Date(Math.max(...deposits.map((d) => d.occurredAt.getTime())));
    const candidates = await findAmountCandidates(tx, order.bankAccountId, order.amount, latest);
    const settings = await tx.setting.findUnique({
      where: { organisationId_mode: { organisationId: order.organisationId, mode: order.mode } },
    });
    // Every deposit here is on the order's account, so of its organisation and mode: one set of rules.
    const rules = enabledRules(settings?.matchingRules);
    const inputs = await readDecisionInputs(
      tx,
      deposits.map((deposit) => ({ deposit, candidates })),
    );
    const decisions = deposits.map((deposit, i) => ({ deposit, decision: decideUnderRules(rules, deps.readings, inputs[i]!, candidates, now) }));
    const outcomes = lateOrderOutcomes(decisions, settings?.autoConfirmLateOrders ?? false);
    for (const outcome of outcomes) {
      if (outcome.outcome === 'confirmed') {
        const { order: paid, transaction } = await confirmDeposit(
          tx,
          outcome.deposit,
          outcome.orderId,
          AUTOMATIC(outcome.reason),
          { depositStatuses: ['unmatched'], orderStatuses: ['open'], payerName: outcome.payerName },
          outcome.explanation,
          now,
        );
        await recordEventsFor(tx, transaction, now, [{ type: 'order.paid', data: { object: orderObject(paid, deps.publicBaseUrl) } }]);
      } else {
        const transaction = await setDepositStatus(
          tx,
          outcome.deposit.id,
          ['unmatched'],
          { status: 'held', orderId: null, candidateOrderIds: outcome.candidateOrderIds, decision: outcome.explanation },
          now,
        );
        await recordEventsFor(tx, transaction, now, [
          { type: 'transaction.held', data: { object: transactionObject(transaction), candidate_order_ids: outcome.candidateOrderIds } },
        ]);
      }
    }
    return outcomes.length > 0;
  });
}
