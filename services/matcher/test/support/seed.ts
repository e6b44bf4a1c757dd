import { newId, type Mode } from '@pmatch/contracts';
import type { Database, PrismaClient } from '@pmatch/db';
import { RedisLock, createLogger, type Clock } from '@pmatch/platform';
import { uniqueName } from '@pmatch/testkit';
import type { Redis } from 'ioredis';
import type { NameReadings } from '../../src/domain/names/readings';
import type { MatcherDeps } from '../../src/use-cases/deps';

/** Rows the matcher's tests start from, written straight to the database as the other services would. */

/** An organisation with one bank account in `mode`. */
export async function seedAccount(prisma: PrismaClient, mode: Mode = 'test'): Promise<{ orgId: string; accountId: string }> {
  const orgId = newId('organisation');
  const accountId = newId('bankAccount');
  await prisma.organisation.create({ data: { id: orgId, name: 'Shop', ownerEmail: 'o@example.com' } });
  await prisma.bankAccount.create({
    data: { id: accountId, organisationId: orgId, mode, bankCode: '9999', branchCode: '001', accountNumber: '1234567', holderName: 'ｼﾖﾂﾌﾟ' },
  });
  return { orgId, accountId };
}

export interface SeededOrderFields {
  status?: 'open' | 'expired';
  payerName?: string;
  orderedAt?: Date;
}

/**
 * The columns of a test-mode order on the account, ordered 2026-11-21 and open until 2026-12-05
 * unless told otherwise; an expired one expired (and closed) at 2026-11-21 12:00.
 */
export function orderRow(orgId: string, accountId: string, amount: bigint, fields: SeededOrderFields = {}) {
  const expired = fields.status === 'expired';
  return {
    id: newId('order'),
    organisationId: orgId,
    mode: 'test',
    bankAccountId: accountId,
    status: fields.status ?? 'open',
    amount,
    payerName: fields.payerName ?? 'ﾔﾏﾀﾞ',
    externalId: uniqueName('e'),
    itemName: 'item',
    orderedAt: fields.orderedAt ?? new Date('2026-11-21T00:00:00Z'),
    expiresAt: new Date(expired ? '2026-11-21T12:00:00Z' : '2026-12-05T00:00:00Z'),
    closedAt: expired ? new Date('2026-11-21T12:00:00Z') : null,
    paymentToken: uniqueName('tok'),
  };
}

export function seedOrder(prisma: PrismaClient, orgId: string, accountId: string, amount: bigint, fields: SeededOrderFields = {}) {
  return prisma.order.create({ data: orderRow(orgId, accountId, amount, fields) });
}

export interface SeededDepositFields {
  direction?: string;
  status?: string;
  counterparty?: string;
  occurredAt?: Date;
}

/** A test-mode deposit on the account, pending and from ﾔﾏﾀﾞ on 2026-11-22 09:00 unless told otherwise. */
export function seedDeposit(prisma: PrismaClient, orgId: string, accountId: string, amount: bigint, fields: SeededDepositFields = {}) {
  return prisma.transaction.create({
    data: {
      id: newId('transaction'),
      organisationId: orgId,
      mode: 'test',
      bankAccountId: accountId,
      bankReference: uniqueName('ref'),
      direction: fields.direction ?? 'deposit',
      status: fields.status ?? 'pending',
      amount,
      counterparty: fields.counterparty ?? 'ﾔﾏﾀﾞ',
      occurredAt: fields.occurredAt ?? new Date('2026-11-22T09:00:00Z'),
    },
  });
}

/** The matcher's dependencies on a test database: locks under `lockPrefix` (its own unless given), a silent logger, 5 s lock limits. */
export function matcherDeps(database: Database, redis: Redis, clock: Clock, readings: NameReadings, lockPrefix = uniqueName('pmatch-test:')): MatcherDeps {
  return {
    database,
    prisma: database.prisma,
    lock: new RedisLock(redis, lockPrefix),
    clock,
    logger: createLogger('test', 'silent'),
    publicBaseUrl: 'http://localhost:3000',
    lockTtlMs: 5_000,
    lockWaitMs: 5_000,
    readings,
  };
}
