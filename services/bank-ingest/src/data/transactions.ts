import { EXCHANGES, ROUTING_KEYS, newId, type DepositReceived } from '@pmatch/contracts';
import { enqueue, recordEvents, transactionView, type BankAccountRow, type PrismaClient, type TransactionRow } from '@pmatch/db';
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
    // INSERT … ON CONFLICT DO NOTHING RETURNING: the stored row comes back with the insert itself.
    const [transaction] = await tx.transaction.createManyAndReturn({
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
    if (transaction === undefined) {
      const existing = await tx.transaction.findUniqueOrThrow({
        where: { bankAccountId_bankReference: { bankAccountId: incoming.bankAccountId, bankReference: incoming.bankReference } },
      });
      return { transaction: existing, duplicate: true };
    }
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

/** How long a bank account read for a notification is reused before it is read again. */
export const BANK_ACCOUNT_CACHE_MS = 60_000;

/**
 * Bank accounts by id, each reused for BANK_ACCOUNT_CACHE_MS, so that a notification does not
 * read its account every time. Safe because what a notification takes from the account (its
 * organisation and mode) is fixed when the account is created: no code path updates or deletes
 * a bank account, and the transaction's foreign key still checks that the account exists. The
 * TTL bounds how long an operator's change made by hand in SQL goes unseen. An unknown id is not
 * cached, so an account added a moment ago is found at once, and the cache holds only accounts
 * that exist.
 */
export class BankAccountCache {
  private readonly entries = new Map<string, { until: number; account: BankAccountRow }>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly ttlMs: number = BANK_ACCOUNT_CACHE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async find(id: string): Promise<BankAccountRow | null> {
    const cached = this.entries.get(id);
    if (cached !== undefined && this.now() < cached.until) return cached.account;
    const account = await findBankAccount(this.prisma, id);
    if (account === null) this.entries.delete(id);
    else this.entries.set(id, { until: this.now() + this.ttlMs, account });
    return account;
  }
}
