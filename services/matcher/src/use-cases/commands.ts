import { AppError, QUEUES, type MatcherCommand, type Payment } from '@pmatch/contracts';
import { amountOf, orderObject, transactionObject, type OrderRow, type Tx, type TransactionRow } from '@pmatch/db';
import { claimMessage, reportOutOfScope } from '@pmatch/platform';
import { StaleDecisionError, confirmDeposit, payOrder, recordEventsFor, setDepositStatus } from '../data/conditional-writes';
import { appendDecisionAudit } from '../data/audit-rows';
import { forgetPayer, rememberPayer } from '../data/payer-aliases';
import { assertMatchable, assertReversible, decidedBy, outsidePayment } from '../domain/payments';
import { underAccountLock, type MatcherDeps } from './deps';

export const COMMANDS_CONSUMER = 'matcher.commands';

export type CommandResult = { kind: 'order'; row: OrderRow } | { kind: 'transaction'; row: TransactionRow };

type Scope = { organisation_id: string; mode: string };

/** The caller stopped waiting (its request timed out) before the command could be carried out. */
export class CommandExpiredError extends Error {
  override name = 'CommandExpiredError';
}

/**
 * Carries out a command under the account lock in one DB transaction, with the audit row of the
 * person who asked when the command carries one. A command message seen before (the broker
 * redelivered it after a crash) changes nothing and answers the current state.
 * `callerWaits` is asked once the lock is taken, inside the transaction: a command whose caller
 * gave up meanwhile throws CommandExpiredError and changes nothing.
 */
export async function runCommand(deps: MatcherDeps, command: DecisionCommand, messageId: string, callerWaits: () => boolean): Promise<CommandResult> {
  const target = await findTarget(deps, command, messageId);
  return underAccountLock(deps, target.bankAccountId, () =>
    deps.prisma.$transaction(async (tx) => {
      if (!callerWaits()) throw new CommandExpiredError(`command ${messageId} is past its deadline`);
      if (!(await claimMessage(tx, COMMANDS_CONSUMER, messageId))) return currentState(tx, command);
      const now = deps.clock.now();
      const result = await carryOut(tx, deps, command, now);
      // A person's decision and its audit row commit together, or neither does.
      if (command.audit !== undefined) await appendDecisionAudit(tx, command, command.audit, result.row.id, { status: result.row.status }, now);
      return result;
    }),
  );
}

async function carryOut(tx: Tx, deps: MatcherDeps, command: DecisionCommand, now: Date): Promise<CommandResult> {
  switch (command.type) {
    case 'order.reverse':
      return { kind: 'order', row: await reverse(tx, deps, command, now) };
    case 'order.mark_paid':
      return { kind: 'order', row: await markPaid(tx, deps, command, now) };
    case 'transaction.match':
      return { kind: 'transaction', row: await match(tx, deps, command, now) };
    case 'transaction.exclude':
      return { kind: 'transaction', row: await exclude(tx, command, now) };
    case 'transaction.restore':
      return { kind: 'transaction', row: await restore(tx, command, now) };
  }
}

/**
 * The account whose lock the command needs: that of the order or transaction it is about, in the
 * command's organisation and mode. orders-api sends only ids it found in that scope, so one found
 * outside it is an out-of-scope message: reported, and answered as missing like any other.
 */
async function findTarget(deps: MatcherDeps, command: DecisionCommand, messageId: string): Promise<{ bankAccountId: string }> {
  const scope = { organisationId: command.organisation_id, mode: command.mode };
  const outOfScope = async (kind: 'order' | 'transaction', id: string, exists: Promise<unknown>): Promise<AppError> => {
    if ((await exists) !== null) {
      const report = { logger: deps.logger, ...(deps.metrics ? { count: deps.metrics.outOfScope } : {}) };
      reportOutOfScope(report, QUEUES.matcherCommands, messageId, `${kind} ${id} is not of ${command.organisation_id} (${command.mode})`);
    }
    return new AppError('resource_missing', `No such ${kind}: ${id}.`);
  };
  const orderExists = (id: string) => deps.prisma.order.findUnique({ where: { id }, select: { id: true } });
  if (command.type === 'order.reverse' || command.type === 'order.mark_paid') {
    const order = await deps.prisma.order.findFirst({ where: { id: command.order_id, ...scope }, select: { bankAccountId: true } });
    if (order === null) throw await outOfScope('order', command.order_id, orderExists(command.order_id));
    return order;
  }
  const transaction = await deps.prisma.transaction.findFirst({ where: { id: command.transaction_id, ...scope }, select: { bankAccountId: true } });
  if (transaction === null) {
    throw await outOfScope(
      'transaction',
      command.transaction_id,
      deps.prisma.transaction.findUnique({ where: { id: command.transaction_id }, select: { id: true } }),
    );
  }
  if (command.type === 'transaction.match') {
    const order = await deps.prisma.order.findFirst({ where: { id: command.order_id, ...scope }, select: { id: true } });
    if (order === null) throw await outOfScope('order', command.order_id, orderExists(command.order_id));
  }
  return transaction;
}

async function currentState(tx: Tx, command: DecisionCommand): Promise<CommandResult> {
  if (command.type === 'order.reverse' || command.type === 'order.mark_paid') {
    return { kind: 'order', row: await tx.order.findUniqueOrThrow({ where: { id: command.order_id } }) };
  }
  return { kind: 'transaction', row: await tx.transaction.findUniqueOrThrow({ where: { id: command.transaction_id } }) };
}

async function lockOrder(tx: Tx, id: string, scope: Scope): Promise<OrderRow> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM orders WHERE id = ${id} AND organisation_id = ${scope.organisation_id} AND mode = ${scope.mode} FOR UPDATE`;
  if (rows.length === 0) throw new AppError('resource_missing', `No such order: ${id}.`, { param: 'order_id' });
  return tx.order.findUniqueOrThrow({ where: { id } });
}

async function lockTransaction(tx: Tx, id: string, scope: Scope): Promise<TransactionRow> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM transactions WHERE id = ${id} AND organisation_id = ${scope.organisation_id} AND mode = ${scope.mode} FOR UPDATE`;
  if (rows.length === 0) throw new AppError('resource_missing', `No such transaction: ${id}.`);
  return tx.transaction.findUniqueOrThrow({ where: { id } });
}

type CommandOf<T extends MatcherCommand['type']> = Extract<MatcherCommand, { type: T }>;

/** The commands about one order or one deposit, carried out by `runCommand`. */
export type DecisionCommand = Exclude<MatcherCommand, { type: 'rules.preview' | 'rules.confirm_previewed' | 'deposit.explain' }>;

/**
 * Paid → open within 24 hours (later only from the console, with a reason); the deposit becomes
 * unmatched; order.payment_reversed says who reversed it, from where and why.
 */
async function reverse(tx: Tx, deps: MatcherDeps, command: CommandOf<'order.reverse'>, now: Date): Promise<OrderRow> {
  const order = await lockOrder(tx, command.order_id, command);
  const previousPayment = assertReversible({ status: order.status, payment: order.payment as Payment | null }, now, command);
  // An account given per order holds one open order: once it went to another (after its rest), this one cannot reopen on it.
  if (order.dedicated && order.customerReference === null) {
    const [taken] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM orders WHERE bank_account_id = ${order.bankAccountId} AND dedicated AND customer_reference IS NULL AND status = 'open' LIMIT 1`;
    if (taken !== undefined) {
      throw new AppError(
        'order_not_open',
        `The order's dedicated account has since been given to ${taken.id}; the payment cannot be reversed while that order is open.`,
      );
    }
  }
  // Its transfer code may have gone to a new order since it closed (after 180 days): then it reopens without one.
  const reopened = await tx.$executeRaw`
    UPDATE orders SET status = 'open', payment = NULL, closed_at = NULL, updated_at = ${now},
      transfer_code = CASE WHEN EXISTS (SELECT FROM orders other WHERE other.bank_account_id = orders.bank_account_id
                                          AND other.transfer_code = orders.transfer_code AND other.status = 'open') THEN NULL ELSE transfer_code END
    WHERE id = ${order.id} AND status = 'paid'`;
  if (reopened !== 1) throw new StaleDecisionError(`order ${order.id} is no longer paid`);
  // A person said the payment a taught payer made was wrong: the service forgets what it was taught.
  if (previousPayment.reason === 'rule:learned_payer') {
    await forgetPayer(tx, { bankAccountId: order.bankAccountId, depositorName: previousPayment.counterparty, payerName: order.payerName });
  }
  if (previousPayment.transaction_id !== null) {
    await setDepositStatus(
      tx,
      previousPayment.transaction_id,
      ['confirmed'],
      { status: 'unmatched', orderId: null, candidateOrderIds: [], decision: { reason: 'payment_reversed', candidates: [] } },
      now,
    );
  }
  const row = await tx.order.findUniqueOrThrow({ where: { id: order.id } });
  await recordEventsFor(tx, row, now, [
    {
      type: 'order.payment_reversed',
      data: {
        object: orderObject(row, deps.publicBaseUrl),
        previous_payment: previousPayment,
        reversal: { decided_by: decidedBy(command).decidedBy, trigger: command.trigger, reason: command.reason ?? null, reversed_at: now.toISOString() },
      },
    },
  ]);
  return row;
}

/** open → paid_outside, payment.transaction_id null, order.paid. */
async function markPaid(tx: Tx, deps: MatcherDeps, command: CommandOf<'order.mark_paid'>, now: Date): Promise<OrderRow> {
  const order = await lockOrder(tx, command.order_id, command);
  // A shop platform reports only its own orders' payments, and only it reports theirs.
  if ((command.trigger === 'shop') !== (order.source === 'shop')) {
    throw new AppError(
      'order_not_open',
      command.trigger === 'shop' ? 'The order did not come from a shop platform.' : 'The order is managed by a shop platform.',
    );
  }
  if (order.status !== 'open') throw new AppError('order_not_open', `The order is ${order.status}; only an open order can be marked paid.`);
  const paidAt = command.paid_at === undefined ? now : new Date(command.paid_at);
  if (paidAt.getTime() > now.getTime()) throw new AppError('parameter_invalid', 'paid_at must not be in the future.', { param: 'paid_at' });
  const payment = outsidePayment({ amount: amountOf(order.amount), payerName: order.payerName }, paidAt, now, decidedBy(command));
  const row = await payOrder(tx, order.id, { statuses: ['open'], amount: order.amount }, payment, 'paid_outside', now);
  await recordEventsFor(tx, row, now, [{ type: 'order.paid', data: { object: orderObject(row, deps.publicBaseUrl) } }]);
  return row;
}

/** A held or unmatched deposit confirmed for an order by a person. */
async function match(tx: Tx, deps: MatcherDeps, command: CommandOf<'transaction.match'>, now: Date): Promise<TransactionRow> {
  const deposit = await lockTransaction(tx, command.transaction_id, command);
  const order = await lockOrder(tx, command.order_id, command);
  assertMatchable({
    deposit: { ...deposit, amount: amountOf(deposit.amount) },
    order: { ...order, amount: amountOf(order.amount) },
  });
  const { order: paid, transaction } = await confirmDeposit(
    tx,
    deposit,
    order.id,
    decidedBy(command),
    // A held candidate may be an order that expired meanwhile: a person may still pay it.
    { depositStatuses: ['held', 'unmatched'], orderStatuses: ['open', 'expired'] },
    { reason: 'manual', candidates: [] },
    now,
  );
  if (command.remember_payer) {
    const taught = { organisationId: deposit.organisationId, mode: deposit.mode, bankAccountId: deposit.bankAccountId, depositorName: deposit.counterparty };
    await rememberPayer(tx, { ...taught, payerName: order.payerName }, decidedBy(command).decidedBy, now);
  }
  await recordEventsFor(tx, transaction, now, [{ type: 'order.paid', data: { object: orderObject(paid, deps.publicBaseUrl) } }]);
  return transaction;
}

/** A deposit that is not the merchant's is taken out, unless an open order could be its. */
async function exclude(tx: Tx, command: CommandOf<'transaction.exclude'>, now: Date): Promise<TransactionRow> {
  const deposit = await lockTransaction(tx, command.transaction_id, command);
  if (deposit.status !== 'held' && deposit.status !== 'unmatched') {
    throw new AppError('transaction_not_excludable', `A ${deposit.status} transaction cannot be excluded.`);
  }
  const openOrder = await tx.order.findFirst({
    where: { bankAccountId: deposit.bankAccountId, amount: deposit.amount, status: 'open' },
    select: { id: true },
  });
  if (openOrder !== null) {
    throw new AppError('open_order_with_same_amount', `An open order with the same amount exists (${openOrder.id}); match or cancel it first.`);
  }
  // The decision says what happened last: an excluded deposit no longer shows why it was held.
  return setDepositStatus(
    tx,
    deposit.id,
    [deposit.status],
    { status: 'excluded', orderId: null, candidateOrderIds: [], decision: { reason: 'excluded', candidates: [] } },
    now,
  );
}

async function restore(tx: Tx, command: CommandOf<'transaction.restore'>, now: Date): Promise<TransactionRow> {
  const deposit = await lockTransaction(tx, command.transaction_id, command);
  if (deposit.status !== 'excluded') throw new AppError('transaction_not_excluded', `The transaction is ${deposit.status}, not excluded.`);
  return setDepositStatus(
    tx,
    deposit.id,
    ['excluded'],
    { status: 'unmatched', orderId: null, candidateOrderIds: [], decision: { reason: 'restored', candidates: [] } },
    now,
  );
}

export function resultView(result: CommandResult, publicBaseUrl: string) {
  return result.kind === 'order' ? { order: orderObject(result.row, publicBaseUrl) } : { transaction: transactionObject(result.row) };
}
