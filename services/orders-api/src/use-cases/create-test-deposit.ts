import { AppError, type CreateTestDepositRequest, type Transaction } from '@pmatch/contracts';
import type { Actor } from '../domain/actor';
import { resolveBankAccount } from '../domain/api-key-auth';
import type { OrdersApiDeps } from './deps';

/** Test deposits exist in test mode only; to a live actor there is no such thing. */
export function assertMayCreateTestDeposits(actor: Actor): void {
  if (actor.mode !== 'test') throw new AppError('resource_missing', 'No such endpoint for live keys: test deposits need a test key.');
}

/**
 * A deposit into a test account, as if the bank had announced it: bank-ingest stores it as it
 * stores a bank notification, and the matcher decides it. Resolves with the decided deposit.
 */
export async function createTestDeposit(
  deps: Pick<OrdersApiDeps, 'clock' | 'bankIngest'>,
  actor: Actor,
  request: CreateTestDepositRequest,
): Promise<Transaction> {
  assertMayCreateTestDeposits(actor);
  const now = deps.clock.now();
  const occurredAt = request.occurred_at === undefined ? now : new Date(request.occurred_at);
  if (occurredAt.getTime() > now.getTime()) {
    throw new AppError('parameter_invalid', 'occurred_at must not be in the future.', { param: 'occurred_at' });
  }
  return deps.bankIngest.createTestDeposit({
    type: 'test_deposit.create',
    organisation_id: actor.organisationId,
    bank_account_id: resolveBankAccount(actor, request.bank_account_id, { dedicatedAllowed: true }),
    amount: request.amount,
    counterparty: request.counterparty,
    occurred_at: occurredAt.toISOString(),
  });
}
