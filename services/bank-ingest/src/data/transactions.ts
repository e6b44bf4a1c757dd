import { EXCHANGES, ROUTING_KEYS, newId, type DepositReceived } from '@pmatch/contracts';
import {
  columns,
  outboxInsert,
  outboxValues,
  recordEvents,
  sql,
  statement,
  transactionFields,
  transactionView,
  type BankAccountRow,
  type Columns,
  type Database,
  type LeasedMessage,
  type OutboxHandOver,
  type OutboxValues,
  type PrismaClient,
  type Sql,
  type TransactionRow,
} from '@pmatch/db';
import { BatchWriter, type OutboxPublisher } from '@pmatch/platform';
import { initialStatus, type IncomingTransaction } from '../domain/transaction';

export interface StoreResult {
  transaction: TransactionRow;
  duplicate: boolean;
}

/** A new transaction's columns as the INSERTs write them. */
interface NewTransactionValues {
  id: string;
  organisationId: string;
  mode: string;
  bankAccountId: string;
  bankReference: string;
  direction: string;
  status: string;
  amount: bigint;
  counterparty: string;
  occurredAt: Date;
  storedAt: Date;
}

function newTransactionValues(id: string, incoming: IncomingTransaction, storedAt: Date): NewTransactionValues {
  return {
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
    storedAt,
  };
}

/**
 * Inserts a transaction unless its (bank account, bank reference) is stored already; the stored
 * row comes back with the insert itself, and no row means a duplicate.
 */
const insertTransaction = statement<NewTransactionValues, TransactionRow>(
  'bank_ingest.insert_transaction',
  (p) => sql`INSERT INTO transactions
    (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at)
  VALUES (${p.id}, ${p.organisationId}, ${p.mode}, ${p.bankAccountId}, ${p.bankReference}, ${p.direction}, ${p.status}, ${p.amount},
          ${p.counterparty}, ${p.occurredAt}, ${p.storedAt}, ${p.storedAt})
  ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
  RETURNING ${transactionFields()}`,
);

/**
 * Deposits and their `deposit.received` outbox rows (message ids `deposit_<id>`), any number in
 * one statement, so that they need no transaction of their own. A deposit's outbox row is inserted
 * only when the deposit was: a duplicate inserts neither, and neither does a second deposit of the
 * same reference in the same batch. The rows are inserted leased (`insertNewDeposits` hands them over).
 */
const insertDeposits = statement<Columns<Omit<NewTransactionValues, 'direction'>> & OutboxValues, TransactionRow>(
  'bank_ingest.insert_deposits',
  (p) => sql`WITH incoming AS (
     SELECT * FROM unnest(${p.id}::text[], ${p.organisationId}::text[], ${p.mode}::text[], ${p.bankAccountId}::text[], ${p.bankReference}::text[],
                          ${p.status}::text[], ${p.amount}::bigint[], ${p.counterparty}::text[], ${p.occurredAt}::timestamptz[], ${p.storedAt}::timestamptz[])
       WITH ORDINALITY AS d(id, organisation_id, mode, bank_account_id, bank_reference, status, amount, counterparty, occurred_at, stored_at, n)),
   stored AS (
     INSERT INTO transactions
       (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at)
     SELECT id, organisation_id, mode, bank_account_id, bank_reference, 'deposit', status, amount, counterparty, occurred_at, stored_at, stored_at
     FROM incoming ORDER BY n
     ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
     RETURNING ${transactionFields()}),
   announced AS (${outboxInsert(p, "u.message_id IN (SELECT 'deposit_' || id FROM stored)", { leased: true })})
   SELECT * FROM stored`,
);

/** A transaction to store, and when it came. */
export interface StoreRequest {
  incoming: IncomingTransaction;
  at: Date;
}

/** At most this many deposits stored by one statement. */
export const DEPOSITS_PER_STATEMENT = 100;

/**
 * Stores transactions once per (bank account, bank reference), atomically with what announces
 * them: a deposit its `deposit.received` message, a withdrawal its `transaction.withdrawn` event.
 * A repeated notification stores nothing and answers the transaction stored the first time.
 * Deposits are written in batches (a `BatchWriter`); each is answered once its batch committed.
 */
export class TransactionStore {
  private readonly deposits: BatchWriter<StoreRequest, TransactionRow | null>;

  constructor(
    private readonly database: Database,
    private readonly outbox: OutboxPublisher,
  ) {
    this.deposits = new BatchWriter(
      (requests: StoreRequest[]) => insertNewDeposits(database.sql, requests, (messages) => outbox.publishLeased(messages)),
      DEPOSITS_PER_STATEMENT,
    );
  }

  async store(incoming: IncomingTransaction, at: Date): Promise<StoreResult> {
    if (incoming.direction !== 'deposit') {
      const stored = await storeWithdrawal(this.database, incoming, at);
      if (!stored.duplicate) this.outbox.nudge();
      return stored;
    }
    // A duplicate is read after its batch, not in it: the batch has committed by then, and a
    // failed read must fail only this notification, not store the batch again.
    const transaction = await this.deposits.submit({ incoming, at });
    return transaction === null ? { transaction: await storedFirst(this.database.sql, incoming), duplicate: true } : { transaction, duplicate: false };
  }
}

/**
 * Deposits in one statement (`insertDeposits`); answers per request, in the order given, the row
 * stored, or null for a duplicate (of a stored deposit, or of an earlier one in the same batch).
 * The new deposits' `deposit.received` messages go to `handOver` once the statement committed
 * (`db` must run it on its own, not in a transaction of the caller's).
 */
export async function insertNewDeposits(db: Sql, requests: StoreRequest[], handOver: OutboxHandOver): Promise<(TransactionRow | null)[]> {
  if (requests.length === 0) return [];
  const ids = requests.map(() => newId('transaction'));
  const announcements = requests.map(({ incoming }, i): LeasedMessage => {
    const message: DepositReceived = {
      transaction_id: ids[i]!,
      bank_account_id: incoming.bankAccountId,
      ...(incoming.replyTo === undefined ? {} : { reply_to: incoming.replyTo }),
    };
    return { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived, payload: message, messageId: `deposit_${ids[i]}` };
  });
  const deposits = requests.map(({ incoming, at }, i) => {
    const { direction, ...deposit } = newTransactionValues(ids[i]!, incoming, at);
    return deposit;
  });
  const rows = await db.rows(insertDeposits, { ...columns(deposits), ...outboxValues(announcements) });
  const stored = new Map(rows.map((row) => [row.id, row]));
  handOver(announcements.filter((_, i) => stored.has(ids[i]!)));
  return ids.map((id) => stored.get(id) ?? null);
}

async function storeWithdrawal(database: Database, incoming: IncomingTransaction, at: Date): Promise<StoreResult> {
  return database.transaction(async (tx) => {
    const [transaction] = await tx.rows(insertTransaction, newTransactionValues(newId('transaction'), incoming, at));
    if (transaction === undefined) return { transaction: await storedFirst(tx, incoming), duplicate: true };
    await recordEvents(tx, { organisationId: incoming.organisationId, mode: incoming.mode, bankAccountId: incoming.bankAccountId, at }, [
      { type: 'transaction.withdrawn', data: { object: transactionView(transaction) } },
    ]);
    return { transaction, duplicate: false };
  });
}

const findByReference = statement<{ bankAccountId: string; bankReference: string }, TransactionRow>(
  'bank_ingest.find_transaction_by_reference',
  (p) => sql`SELECT ${transactionFields()} FROM transactions WHERE bank_account_id = ${p.bankAccountId} AND bank_reference = ${p.bankReference}`,
);

/**
 * The transaction an insert found in its way. Transactions are never deleted, and the insert
 * waited for the one in its way to commit, so it is there to read.
 */
async function storedFirst(db: Sql, incoming: IncomingTransaction): Promise<TransactionRow> {
  const [existing] = await db.rows(findByReference, { bankAccountId: incoming.bankAccountId, bankReference: incoming.bankReference });
  if (existing === undefined) throw new Error(`transaction ${incoming.bankAccountId}/${incoming.bankReference} conflicted on insert but cannot be read`);
  return existing;
}

export async function findBankAccount(prisma: PrismaClient, id: string) {
  return prisma.bankAccount.findUnique({ where: { id } });
}

/** How long a bank account read for a notification is reused before it is read again. */
export const BANK_ACCOUNT_CACHE_MS = 60_000;

/**
 * Bank accounts by id, each reused for BANK_ACCOUNT_CACHE_MS. Safe because what a notification
 * takes from an account (its organisation and mode) never changes once it exists, and the
 * transaction's foreign key still checks that it exists; the TTL bounds how long a change made by
 * hand in SQL goes unseen. An unknown id is not cached, so a new account is found at once.
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
