import {
  AppError,
  CreateTestDepositRequest,
  QUEUES,
  TransactionReply,
  fromWireError,
  type CreateTestDepositCommand,
} from '@pmatch/contracts';
import type { PrismaClient } from '@pmatch/db';
import { parseInput, type Broker, type Clock } from '@pmatch/platform';
import { Router } from 'express';
import { authOf } from './auth';
import { resolveBankAccount } from '../domain/auth';

export interface TestDepositsDeps {
  prisma: PrismaClient;
  broker: Broker;
  clock: Clock;
  commandTimeoutMs: number;
}

/**
 * POST /v1/test/deposits: bank-ingest stores the deposit exactly as a bank notification, the
 * matcher decides it, and this request answers with the decision.
 */
export function testDepositsRouter(deps: TestDepositsDeps): Router {
  const router = Router();
  router.post('/v1/test/deposits', async (req, res) => {
    const auth = authOf(req);
    if (auth.mode !== 'test') throw new AppError('resource_missing', 'No such endpoint for live keys: test deposits need a test key.');
    const request = parseInput(CreateTestDepositRequest, req.body);
    const now = deps.clock.now();
    const occurredAt = request.occurred_at === undefined ? now : new Date(request.occurred_at);
    if (occurredAt.getTime() > now.getTime()) {
      throw new AppError('parameter_invalid', 'occurred_at must not be in the future.', { param: 'occurred_at' });
    }
    const command: CreateTestDepositCommand = {
      type: 'test_deposit.create',
      organisation_id: auth.organisationId,
      bank_account_id: resolveBankAccount(auth, request.bank_account_id),
      amount: request.amount,
      counterparty: request.counterparty,
      occurred_at: occurredAt.toISOString(),
    };
    const reply = await deps.broker.request(QUEUES.bankIngestCommands, command, TransactionReply, deps.commandTimeoutMs);
    if (!reply.ok) throw fromWireError(reply.error);
    res.status(201).json(reply.transaction);
  });
  return router;
}
