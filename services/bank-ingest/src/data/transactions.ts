import { EXCHANGES, ROUTING_KEYS, newId, type DepositReceived } from '@pmatch/contracts';
import {
  outboxInsert,
  outboxParameters,
  recordEvents,
  statement,
  transactionFields,
  transactionView,
  type BankAccountRow,
  type Database,
  type PrismaClient,
  type Sql,
  type TransactionRow,
} from '@pmatch/db';
import { initialStatus, type IncomingTransaction } from '../domain/transaction';

export interface StoreResult {
  transaction: TransactionRow;
  duplicate: boolean;
}

/**
 * Inserts a transaction unless its (bank account, bank reference) is stored already; the stored
 * row comes back with the insert itself, and no row means a duplicate. Parameters $1 to $11.
 */
const INSERT_TRANSACTION = `INSERT INTO transactions
    (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
  ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
  RETURNING ${transactionFields()}`;

const insertTransaction = statement('bank_ingest.insert_transaction', INSERT_TRANSACTION);

/**
 * A deposit and its `deposit.received` outbox row in one statement, so that it needs no
 * transaction of its own: the outbox row (parameters $12 to $15) is inserted only when the
 * deposit was, and a duplicate inserts neither.
 */
const insertDeposit = statement(
  'bank_ingest.insert_deposit',
  `WITH stored AS (${INSERT_TRANSACTION}),
  announced AS (${outboxInsert(12, 'EXISTS (SELECT FROM stored)')})
  SELECT * FROM stored`,
);

const findByReference = statement(
  'bank_ingest.find_transaction_by_reference',
  `SELECT ${transactionFields()} FROM transactions WHERE bank_account_id = $1 AND bank_reference = $2`,
);

/**
 * Stores a transaction once per (bank account, bank reference), atomically with what announces
 * it: a deposit gets its `deposit.received` outbox row for the matcher (one statement), a
 * withdrawal its `transaction.withdrawn` event (one DB transaction). A repeated notification
 * stores nothing and returns the transaction stored the first time.
 */
export async function storeTransaction(database: Database, incoming: IncomingTransaction, at: Date): Promise<StoreResult> {
  const id = newId('transaction');
  const row = [
    id,
    incoming.organisationId,
    incoming.mode,
    incoming.bankAccountId,
    incoming.bankReference,
    incoming.direction,
    initialStatus(incoming.direction),
    BigInt(incoming.amount),
    incoming.counterparty,
    incoming.occurredAt,
    at,
  ];
  if (incoming.direction === 'deposit') {
    const message: DepositReceived = {
      transaction_id: id,
      bank_account_id: incoming.bankAccountId,
      ...(incoming.replyTo === undefined ? {} : { reply_to: incoming.replyTo }),
    };
    const announcement = { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived, payload: message, messageId: `deposit_${id}` };
    const [transaction] = await database.sql.rows<TransactionRow>(insertDeposit, [...row, ...outboxParameters([announcement])]);
    if (transaction === undefined) return { transaction: await storedFirst(database.sql, incoming), duplicate: true };
    return { transaction, duplicate: false };
  }
  return database.transaction(async (sql) => {
    const [transaction] = await sql.rows<TransactionRow>(insertTransaction, row);
    if (transaction === undefined) return { transaction: await storedFirst(sql, incoming), duplicate: true };
    await recordEvents(sql, { organisationId: incoming.organisationId, mode: incoming.mode, bankAccountId: incoming.bankAccountId, at }, [
      { type: 'transaction.withdrawn', data: { object: transactionView(transaction) } },
    ]);
    return { transaction, duplicate: false };
  });
}

/**
 * The transaction an insert found in its way. Transactions are never deleted, and the insert
 * waited for the one in its way to commit, so it is there to read.
 */
async function storedFirst(sql: Sql, incoming: IncomingTransaction): Promise<TransactionRow> {
  const [existing] = await sql.rows<TransactionRow>(findByReference, [incoming.bankAccountId, incoming.bankReference]);
  if (existing === undefined) throw new Error(`transaction ${incoming.bankAccountId}/${incoming.bankReference} conflicted on insert but cannot be read`);
  return existing;
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
