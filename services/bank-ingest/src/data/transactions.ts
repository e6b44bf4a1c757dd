import { EXCHANGES, ROUTING_KEYS, newId, type DepositReceived } from '@pmatch/contracts';
import { enqueue, recordEvents, transactionView, type PrismaClient, type TransactionRow } from '@pmatch/db';
import { initialStatus, type IncomingTransaction } from '../domain/transaction';

export interface StoreResult {
  transaction: TransactionRow;
  duplicate: boolean;
}

/**
 * Stores a transaction once per (bank account, bank reference), in one DB transaction with what
 * announces it: a deposit gets its `deposit.received` outbox row for the matcher, a withdrawal
 * its `transaction.withdrawn` event. A repeated notification stores nothing and returns the
 * transaction stored the first time.
 */
export async function storeTransaction(prisma: PrismaClient, incoming: IncomingTransaction, at: Date): Promise<StoreResult> {
  return prisma.$transaction(async (tx) => {
    const id = newId('transaction');
    const inserted = await tx.transaction.createMany({
      data: [
        {
          id,
          organisationId: incoming.organisationId,
          mode: incoming.mode,
          bankAccountId: incoming.bankAccountId,
          bankReference: incoming.bankReference,
          direction: incoming.direction,
          status: initialStatus(incoming.direction),
          amount: BigInt(incoming.amount),
          counterparty: incoming.counterparty,
          occurredAt: incoming.occurredAt,
          createdAt: at,
          updatedAt: at,
        },
      ],
      skipDuplicates: true,
    });
    if (inserted.count === 0) {
      const existing = await tx.transaction.findUniqueOrThrow({
        where: { bankAccountId_bankReference: { bankAccountId: incoming.bankAccountId, bankReference: incoming.bankReference } },
      });
      return { transaction: existing, duplicate: true };
    }
    const transaction = await tx.transaction.findUniqueOrThrow({ where: { id } });
    if (incoming.direction === 'deposit') {
      const message: DepositReceived = {
        transaction_id: id,
        bank_account_id: incoming.bankAccountId,
        ...(incoming.replyTo === undefined ? {} : { reply_to: incoming.replyTo }),
      };
      await enqueue(tx, {
        exchange: EXCHANGES.bank,
        routingKey: ROUTING_KEYS.depositReceived,
        payload: message,
        messageId: `deposit_${id}`,
      });
    } else {
      await recordEvents(tx, { organisationId: incoming.organisationId, mode: incoming.mode, bankAccountId: incoming.bankAccountId, at }, [
        { type: 'transaction.withdrawn', data: { object: transactionView(transaction) } },
      ]);
    }
    return { transaction, duplicate: false };
  });
}

export async function findBankAccount(prisma: PrismaClient, id: string) {
  return prisma.bankAccount.findUnique({ where: { id } });
}

export async function listActiveAdapterSecrets(prisma: PrismaClient) {
  return prisma.bankAdapter.findMany({ where: { revokedAt: null }, select: { id: true, secretEncrypted: true } });
}
