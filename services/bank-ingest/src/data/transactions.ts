import { EXCHANGES, ROUTING_KEYS, newId, type DepositReceived } from '@pmatch/contracts';
import {
  columns,
  outboxInsert,
  outboxValues,
  recordEvents,
  sql,
  preparedQuery,
  transactionFields,
  transactionObject,
  type Columns,
  type Database,
  type LeasedMessage,
  type OutboxHandOver,
  type OutboxValues,
  type PrismaClient,
  type Sql,
  type TransactionRow,
} from '@pmatch/db';
import { BatchWriter, currentTraceparent, type OutboxPublisher } from '@pmatch/platform';
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
  adapterId: string | null;
  remitterCode: string | null;
  bankReversal: boolean;
}

/** The columns of many deposits, and their outbox rows. */
type DepositValues = Columns<Omit<NewTransactionValues, 'direction'>> & OutboxValues;

/** What an import's deposits also write: the import, and each one's record number and raw bytes in hex. */
interface ImportValues {
  importId: string;
  recordLines: number[];
  recordRaws: string[];
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
    adapterId: incoming.adapterId ?? null,
    remitterCode: incoming.remitterCode ?? null,
    bankReversal: incoming.bankReversal ?? false,
  };
}

/**
 * Inserts a transaction unless its (bank account, bank reference) is stored already; the stored
 * row comes back with the insert itself, and no row means a duplicate.
 */
const insertTransaction = preparedQuery<NewTransactionValues, TransactionRow>(
  'bank_ingest.insert_transaction',
  (p) => sql`INSERT INTO transactions
    (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at, adapter_id,
     remitter_code, bank_reversal)
  VALUES (${p.id}, ${p.organisationId}, ${p.mode}, ${p.bankAccountId}, ${p.bankReference}, ${p.direction}, ${p.status}, ${p.amount},
          ${p.counterparty}, ${p.occurredAt}, ${p.storedAt}, ${p.storedAt}, ${p.adapterId}, ${p.remitterCode}, ${p.bankReversal})
  ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
  RETURNING ${transactionFields()}`,
);

/**
 * Deposits and their `deposit.received` outbox rows (message ids `deposit_<id>`), any number in
 * one statement, so that they need no transaction of their own. A deposit's outbox row is inserted
 * only when the deposit was: a duplicate inserts neither, and neither does a second deposit of the
 * same reference in the same batch. The rows are inserted leased for the writer's relay, unless
 * `leased` is false (a writer without a relay). An import's deposits also record the import and
 * their raw records.
 */
function depositsQuery(name: string, { imported, leased }: { imported: boolean; leased: boolean }) {
  return preparedQuery<DepositValues & Partial<ImportValues>, TransactionRow>(
    name,
    (p) => sql`WITH incoming AS (
     SELECT * FROM unnest(${p.id}::text[], ${p.organisationId}::text[], ${p.mode}::text[], ${p.bankAccountId}::text[], ${p.bankReference}::text[],
                          ${p.status}::text[], ${p.amount}::bigint[], ${p.counterparty}::text[], ${p.occurredAt}::timestamptz[], ${p.storedAt}::timestamptz[],
                          ${p.adapterId}::text[], ${p.remitterCode}::text[], ${p.bankReversal}::boolean[])
       WITH ORDINALITY AS d(id, organisation_id, mode, bank_account_id, bank_reference, status, amount, counterparty, occurred_at, stored_at, adapter_id,
                            remitter_code, bank_reversal, n)),
   stored AS (
     INSERT INTO transactions
       (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at, adapter_id,
        remitter_code, bank_reversal${imported ? ', statement_import_id' : ''})
     SELECT id, organisation_id, mode, bank_account_id, bank_reference, 'deposit', status, amount, counterparty, occurred_at, stored_at, stored_at, adapter_id,
            remitter_code, bank_reversal${imported ? sql`, ${p.importId}::text` : ''}
     FROM incoming ORDER BY n
     ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
     RETURNING ${transactionFields()}),
   announced AS (${outboxInsert(p, "u.message_id IN (SELECT 'deposit_' || id FROM stored)", { leased })})${
     imported
       ? sql`,
   recorded AS (
     INSERT INTO statement_records (transaction_id, statement_import_id, line, raw)
     SELECT r.id, ${p.importId}::text, r.line, decode(r.raw, 'hex') FROM unnest(${p.id}::text[], ${p.recordLines}::int[], ${p.recordRaws}::text[]) AS r(id, line, raw)
     WHERE r.id IN (SELECT id FROM stored))`
       : ''
   }
   SELECT * FROM stored`,
  );
}

const insertDeposits = depositsQuery('bank_ingest.insert_deposits', { imported: false, leased: true });
/** An import's deposits: their outbox rows wait unleased until its one transaction commits, then a relay claims them. */
const insertImportedDeposits = depositsQuery('bank_ingest.insert_imported_deposits', { imported: true, leased: false });

/** What a statement import adds to its deposits: the import and each one's raw record. */
export interface ImportedDeposits {
  importId: string;
  records: { line: number; raw: Uint8Array }[];
}

/** A transaction to store, and when it came. */
export interface StoreRequest {
  incoming: IncomingTransaction;
  at: Date;
  /** The trace of the request or message that brought it: its `deposit.received` carries it on. */
  traceparent?: string;
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
    // Written with others, maybe by another request's turn: the trace goes with the deposit.
    const traceparent = currentTraceparent();
    const transaction = await this.deposits.submit({ incoming, at, ...(traceparent === undefined ? {} : { traceparent }) });
    return transaction === null ? { transaction: await storedFirst(this.database.sql, incoming), duplicate: true } : { transaction, duplicate: false };
  }
}

/**
 * Deposits in one statement (`insertDeposits`); answers per request, in the order given, the row
 * stored, or null for a duplicate (of a stored deposit, or of an earlier one in the same batch).
 * Notifications' deposits: the new ones' `deposit.received` messages go to `handOver` once the
 * statement committed (`db` must run it on its own, not in a transaction of the caller's). An
 * import's (`imported`): `db` is the import's transaction, the outbox rows are written unleased
 * and `handOver` is not called; the importer nudges the relay after its commit.
 */
export async function insertNewDeposits(
  db: Sql,
  requests: StoreRequest[],
  handOver: OutboxHandOver,
  imported?: ImportedDeposits,
): Promise<(TransactionRow | null)[]> {
  if (requests.length === 0) return [];
  const ids = requests.map(() => newId('transaction'));
  const announcements = requests.map(({ incoming, traceparent }, i): LeasedMessage => {
    const message: DepositReceived = {
      transaction_id: ids[i]!,
      bank_account_id: incoming.bankAccountId,
      ...(incoming.replyTo === undefined ? {} : { reply_to: incoming.replyTo }),
    };
    return {
      exchange: EXCHANGES.bank,
      routingKey: ROUTING_KEYS.depositReceived,
      payload: message,
      messageId: `deposit_${ids[i]}`,
      ...(traceparent === undefined ? {} : { traceparent }),
    };
  });
  const deposits = requests.map(({ incoming, at }, i) => {
    const { direction: _direction, ...deposit } = newTransactionValues(ids[i]!, incoming, at);
    return deposit;
  });
  const values = { ...columns(deposits), ...outboxValues(announcements) };
  const rows =
    imported === undefined
      ? await db.rows(insertDeposits, values)
      : await db.rows(insertImportedDeposits, {
          ...values,
          importId: imported.importId,
          recordLines: imported.records.map((r) => r.line),
          recordRaws: imported.records.map((r) => Buffer.from(r.raw).toString('hex')),
        });
  const stored = new Map(rows.map((row) => [row.id, row]));
  if (imported === undefined) handOver(announcements.filter((_, i) => stored.has(ids[i]!)));
  return ids.map((id) => stored.get(id) ?? null);
}

async function storeWithdrawal(database: Database, incoming: IncomingTransaction, at: Date): Promise<StoreResult> {
  return database.transaction(async (tx) => {
    const [transaction] = await tx.rows(insertTransaction, newTransactionValues(newId('transaction'), incoming, at));
    if (transaction === undefined) return { transaction: await storedFirst(tx, incoming), duplicate: true };
    await recordEvents(tx, { organisationId: incoming.organisationId, mode: incoming.mode, bankAccountId: incoming.bankAccountId, at }, [
      { type: 'transaction.withdrawn', data: { object: transactionObject(transaction) } },
    ]);
    return { transaction, duplicate: false };
  });
}

const findByReference = preparedQuery<{ bankAccountId: string; bankReference: string }, TransactionRow>(
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
