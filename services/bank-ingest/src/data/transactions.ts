import { EXCHANGES, ROUTING_KEYS, newId, type DepositReceived } from '@pmatch/contracts';
import {
  outboxInsert,
  outboxParameters,
  recordEvents,
  statement,
  transactionFields,
  transactionView,
  type Database,
  type LeasedMessage,
  type OutboxHandOver,
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

/**
 * Inserts a transaction unless its (bank account, bank reference) is stored already; the stored
 * row comes back with the insert itself, and no row means a duplicate. Parameters $1 to $12.
 */
const insertTransaction = statement(
  'bank_ingest.insert_transaction',
  `INSERT INTO transactions
    (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at, adapter_id)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)
  ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
  RETURNING ${transactionFields()}`,
);

/**
 * Deposits and their `deposit.received` outbox rows, any number in one statement, so that they
 * need no transaction of their own: one array per column with one element per deposit ($1 to $10:
 * ids, organisations, modes, accounts, bank references, statuses, amounts, counterparties,
 * occurred_at, the time stored), the adapters ($11), then the outbox rows' arrays ($12 to $15, message ids
 * `deposit_<id>`). A deposit's outbox row is inserted only when the deposit was: a duplicate
 * inserts neither, and neither does a second deposit of the same reference in the same batch. The
 * rows are inserted leased, for the relay to publish without claiming them (`insertNewDeposits`),
 * unless `leased` is false (a writer without a relay). A statement import's deposits also record
 * the import ($16) and their raw records ($17 record numbers, $18 the bytes in hex).
 */
function depositsStatement(name: string, { imported, leased }: { imported: boolean; leased: boolean }) {
  return statement(
    name,
    `WITH incoming AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::timestamptz[], $10::timestamptz[], $11::text[])
       WITH ORDINALITY AS d(id, organisation_id, mode, bank_account_id, bank_reference, status, amount, counterparty, occurred_at, stored_at, adapter_id, n)),
   stored AS (
     INSERT INTO transactions
       (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at, adapter_id${imported ? ', statement_import_id' : ''})
     SELECT id, organisation_id, mode, bank_account_id, bank_reference, 'deposit', status, amount, counterparty, occurred_at, stored_at, stored_at, adapter_id${imported ? ', $16::text' : ''}
     FROM incoming ORDER BY n
     ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
     RETURNING ${transactionFields()}),
   announced AS (${outboxInsert(12, "u.message_id IN (SELECT 'deposit_' || id FROM stored)", { leased })})${
     imported
       ? `,
   recorded AS (
     INSERT INTO statement_records (transaction_id, statement_import_id, line, raw)
     SELECT r.id, $16::text, r.line, decode(r.raw, 'hex') FROM unnest($1::text[], $17::int[], $18::text[]) AS r(id, line, raw)
     WHERE r.id IN (SELECT id FROM stored))`
       : ''
   }
   SELECT * FROM stored`,
  );
}

const insertDeposits = depositsStatement('bank_ingest.insert_deposits', { imported: false, leased: true });
const insertImportedDeposits = depositsStatement('bank_ingest.insert_imported_deposits', { imported: true, leased: true });
const insertImportedDepositsUnleased = depositsStatement('bank_ingest.insert_imported_deposits_unleased', { imported: true, leased: false });

/** What a statement import adds to its deposits: the import, each one's raw record, and whether a relay takes the messages. */
export interface ImportedDeposits {
  importId: string;
  records: { line: number; raw: Uint8Array }[];
  /** False when no relay runs in this process (ops): the rows wait, unleased, for any service's relay. */
  leased: boolean;
}

/** A transaction to store, and when it came. */
export interface StoreRequest {
  incoming: IncomingTransaction;
  at: Date;
}

/** At most this many deposits stored by one statement. */
export const DEPOSITS_PER_STATEMENT = 100;

/**
 * Stores transactions once per (bank account, bank reference), atomically with what announces
 * them: a deposit gets its `deposit.received` outbox row for the matcher, a withdrawal its
 * `transaction.withdrawn` event (one DB transaction). A repeated notification stores nothing and
 * answers the transaction stored the first time.
 *
 * Deposits that arrive while one statement stores others are stored together by the next (a
 * `BatchWriter`): one round trip and one commit for a rush of notifications, and no added wait for
 * one alone. Each is answered only once its statement committed. A batch that fails is written
 * again deposit by deposit, so one that cannot be stored fails only its own notification.
 *
 * What the writes queued goes to the outbox relay once committed: the deposits' messages handed
 * over, a withdrawal's event claimed.
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
 * (`sql` must run it on its own, not in a transaction of the caller's).
 */
export async function insertNewDeposits(
  sql: Sql,
  requests: StoreRequest[],
  handOver: OutboxHandOver,
  imported?: ImportedDeposits,
): Promise<(TransactionRow | null)[]> {
  const ids = requests.map(() => newId('transaction'));
  const column = <T>(value: (incoming: IncomingTransaction) => T) => requests.map((r) => value(r.incoming));
  const announcements = requests.map(({ incoming }, i): LeasedMessage => {
    const message: DepositReceived = {
      transaction_id: ids[i]!,
      bank_account_id: incoming.bankAccountId,
      ...(incoming.replyTo === undefined ? {} : { reply_to: incoming.replyTo }),
    };
    return { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived, payload: message, messageId: `deposit_${ids[i]}` };
  });
  const text = imported === undefined ? insertDeposits : imported.leased ? insertImportedDeposits : insertImportedDepositsUnleased;
  const rows = await sql.rows<TransactionRow>(text, [
    ids,
    column((t) => t.organisationId),
    column((t) => t.mode),
    column((t) => t.bankAccountId),
    column((t) => t.bankReference),
    column((t) => initialStatus(t.direction)),
    column((t) => BigInt(t.amount)),
    column((t) => t.counterparty),
    column((t) => t.occurredAt),
    requests.map((r) => r.at),
    column((t) => t.adapterId ?? null),
    ...outboxParameters(announcements),
    ...(imported === undefined
      ? []
      : [imported.importId, imported.records.map((r) => r.line), imported.records.map((r) => Buffer.from(r.raw).toString('hex'))]),
  ]);
  const stored = new Map(rows.map((row) => [row.id, row]));
  if (imported === undefined || imported.leased) handOver(announcements.filter((_, i) => stored.has(ids[i]!)));
  return ids.map((id) => stored.get(id) ?? null);
}

async function storeWithdrawal(database: Database, incoming: IncomingTransaction, at: Date): Promise<StoreResult> {
  const row = [
    newId('transaction'),
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
    incoming.adapterId ?? null,
  ];
  return database.transaction(async (sql) => {
    const [transaction] = await sql.rows<TransactionRow>(insertTransaction, row);
    if (transaction === undefined) return { transaction: await storedFirst(sql, incoming), duplicate: true };
    await recordEvents(sql, { organisationId: incoming.organisationId, mode: incoming.mode, bankAccountId: incoming.bankAccountId, at }, [
      { type: 'transaction.withdrawn', data: { object: transactionView(transaction) } },
    ]);
    return { transaction, duplicate: false };
  });
}

const findByReference = statement(
  'bank_ingest.find_transaction_by_reference',
  `SELECT ${transactionFields()} FROM transactions WHERE bank_account_id = $1 AND bank_reference = $2`,
);

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
