import { AppError, type MatchTransactionRequest, type Transaction } from '@pmatch/contracts';
import type { TransactionRow } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { findOrder } from '../data/orders';
import { auditedDecision, type AuditContext } from './audit';
import { auditOf, commandContext } from './change-order';
import type { OrdersApiDeps } from './deps';

// Matching by hand, decided by the matcher; each acts on a transaction the actor may see (`findVisibleTransaction`).

/** Asks the matcher to match the deposit to an order. */
export async function matchTransaction(
  deps: CommandDeps,
  actor: Actor,
  transaction: TransactionRow,
  request: MatchTransactionRequest,
  audit?: AuditContext,
): Promise<Transaction> {
  // An order outside the actor's scope is as unknown as one that does not exist.
  if ((await findOrder(deps.database.prisma, actor, request.order_id)) === null) {
    throw new AppError('parameter_invalid', `No such order: ${request.order_id}.`, { param: 'order_id' });
  }
  const rememberPayer = request.remember_payer ?? false;
  return auditedDecision(
    deps,
    audit,
    { action: 'transaction.match', objectId: transaction.id, detail: { order_id: request.order_id, remember_payer: rememberPayer } },
    (commandAudit) =>
      deps.matcher.transactionCommand({
        type: 'transaction.match',
        transaction_id: transaction.id,
        order_id: request.order_id,
        remember_payer: rememberPayer,
        ...commandContext(actor),
        ...auditOf(commandAudit),
      }),
  );
}

/** Asks the matcher to set the deposit aside as no payment for an order. */
export async function excludeTransaction(deps: CommandDeps, actor: Actor, transaction: TransactionRow, audit?: AuditContext): Promise<Transaction> {
  return auditedDecision(deps, audit, { action: 'transaction.exclude', objectId: transaction.id, detail: {} }, (commandAudit) =>
    deps.matcher.transactionCommand({ type: 'transaction.exclude', transaction_id: transaction.id, ...commandContext(actor), ...auditOf(commandAudit) }),
  );
}

/** Asks the matcher to undo an exclusion. */
export async function restoreTransaction(deps: CommandDeps, actor: Actor, transaction: TransactionRow, audit?: AuditContext): Promise<Transaction> {
  return auditedDecision(deps, audit, { action: 'transaction.restore', objectId: transaction.id, detail: {} }, (commandAudit) =>
    deps.matcher.transactionCommand({ type: 'transaction.restore', transaction_id: transaction.id, ...commandContext(actor), ...auditOf(commandAudit) }),
  );
}

type CommandDeps = Pick<OrdersApiDeps, 'database' | 'clock' | 'matcher'>;
