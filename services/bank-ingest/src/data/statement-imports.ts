import { newId } from '@pmatch/contracts';
import { columns, recordEvents, sql, preparedQuery, transactionFields, transactionObject, type Columns, type Sql, type TransactionRow } from '@pmatch/db';
import type { IncomingTransaction } from '../domain/transaction';

export interface StatementImportRow {
  id: string;
  format: string;
  accounts: number;
  records: number;
  stored: number;
  duplicates: number;
  withdrawals: number;
  createdAt: Date;
}

interface NewImport {
  id: string;
  adapterId: string | null;
  format: string;
  sha256: string;
  bytes: string;
  accounts: number;
  records: number;
  at: Date;
}

const IMPORT_FIELDS = sql`id, format, accounts, records, stored, duplicates, withdrawals, created_at AS "createdAt"`;

const insertImport = preparedQuery<NewImport, StatementImportRow>(
  'bank_ingest.begin_import',
  (p) => sql`INSERT INTO statement_imports (id, adapter_id, format, file_sha256, file_bytes, accounts, records, status, created_at)
  VALUES (${p.id}, ${p.adapterId}, ${p.format}, ${p.sha256}, ${p.bytes}::bigint, ${p.accounts}, ${p.records}, 'storing', ${p.at})
  RETURNING ${IMPORT_FIELDS}`,
);

const updateImport = preparedQuery<{ id: string; stored: number; duplicates: number; withdrawals: number; at: Date }, StatementImportRow>(
  'bank_ingest.finish_import',
  (
    p,
  ) => sql`UPDATE statement_imports SET stored = ${p.stored}, duplicates = ${p.duplicates}, withdrawals = ${p.withdrawals}, status = 'stored', finished_at = ${p.at}
  WHERE id = ${p.id}
  RETURNING ${IMPORT_FIELDS}`,
);

/**
 * Records an import before its first transaction is stored (they refer to it), in the import's
 * own transaction `tx`: until it commits nobody sees it, and if it never does, nothing of it is left.
 */
export async function beginImport(
  tx: Sql,
  input: { adapterId: string | undefined; format: string; sha256: string; bytes: number; accounts: number; records: number; at: Date },
): Promise<StatementImportRow> {
  const [row] = await tx.rows(insertImport, {
    id: newId('statementImport'),
    adapterId: input.adapterId ?? null,
    format: input.format,
    sha256: input.sha256,
    bytes: String(input.bytes),
    accounts: input.accounts,
    records: input.records,
    at: input.at,
  });
  return row!;
}

export async function finishImport(
  tx: Sql,
  id: string,
  counts: { stored: number; duplicates: number; withdrawals: number },
  at: Date,
): Promise<StatementImportRow> {
  const [row] = await tx.rows(updateImport, { id, ...counts, at });
  return row!;
}

export interface ImportedWithdrawal {
  incoming: IncomingTransaction;
  line: number;
  raw: Uint8Array;
  /** The bank reference of the deposit a cancellation names. */
  cancels?: string;
}

/** The columns of an import's withdrawals as `insertImportedWithdrawals` takes them. */
type WithdrawalValues = Columns<{
  id: string;
  organisationId: string;
  mode: string;
  bankAccountId: string;
  bankReference: string;
  amount: string;
  counterparty: string;
  occurredAt: Date;
  adapterId: string | null;
  line: number;
  raw: string;
  cancels: string | null;
  remitterCode: string | null;
  bankReversal: boolean;
}> & { importId: string; at: Date };

/**
 * Inserts withdrawals unless their (account, reference) is stored, with each new one's raw record
 * and the deposit it cancels, when that one is stored; returns the rows inserted.
 */
const insertImportedWithdrawals = preparedQuery<WithdrawalValues, TransactionRow>(
  'bank_ingest.insert_imported_withdrawals',
  (p) => sql`WITH incoming AS (
    SELECT * FROM unnest(${p.id}::text[], ${p.organisationId}::text[], ${p.mode}::text[], ${p.bankAccountId}::text[], ${p.bankReference}::text[],
      ${p.amount}::bigint[], ${p.counterparty}::text[], ${p.occurredAt}::timestamptz[], ${p.adapterId}::text[], ${p.line}::int[], ${p.raw}::text[],
      ${p.cancels}::text[], ${p.remitterCode}::text[], ${p.bankReversal}::boolean[])
      WITH ORDINALITY AS w(id, organisation_id, mode, bank_account_id, bank_reference, amount, counterparty, occurred_at, adapter_id, line, raw, cancels,
                           remitter_code, bank_reversal, n)),
  stored AS (
    INSERT INTO transactions
      (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at, adapter_id,
       statement_import_id, remitter_code, bank_reversal)
    SELECT id, organisation_id, mode, bank_account_id, bank_reference, 'withdrawal', 'unmatched', amount, counterparty, occurred_at, ${p.at}, ${p.at}, adapter_id,
           ${p.importId}, remitter_code, bank_reversal
    FROM incoming ORDER BY n
    ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
    RETURNING ${transactionFields()}),
  recorded AS (
    INSERT INTO statement_records (transaction_id, statement_import_id, line, raw, cancels_transaction_id)
    SELECT w.id, ${p.importId}, w.line, decode(w.raw, 'hex'),
      (SELECT d.id FROM transactions d WHERE d.bank_account_id = w.bank_account_id AND d.bank_reference = w.cancels AND d.direction = 'deposit')
    FROM incoming w WHERE w.id IN (SELECT id FROM stored))
  SELECT * FROM stored`,
);

/**
 * Withdrawals of an import, in the import's transaction `tx`: each stored once per (account,
 * reference) with its raw record, linked to the deposit it cancels when that one is stored (earlier
 * in the same transaction too), and announced by `transaction.withdrawn` as a notified withdrawal
 * is. Returns how many were new.
 */
export async function storeImportedWithdrawals(tx: Sql, importId: string, withdrawals: ImportedWithdrawal[], at: Date): Promise<number> {
  if (withdrawals.length === 0) return 0;
  const values = columns(
    withdrawals.map((w) => ({
      id: newId('transaction'),
      organisationId: w.incoming.organisationId,
      mode: w.incoming.mode,
      bankAccountId: w.incoming.bankAccountId,
      bankReference: w.incoming.bankReference,
      amount: String(w.incoming.amount),
      counterparty: w.incoming.counterparty,
      occurredAt: w.incoming.occurredAt,
      adapterId: w.incoming.adapterId ?? null,
      line: w.line,
      raw: Buffer.from(w.raw).toString('hex'),
      cancels: w.cancels ?? null,
      remitterCode: w.incoming.remitterCode ?? null,
      bankReversal: w.incoming.bankReversal ?? false,
    })),
  );
  const stored = await tx.rows(insertImportedWithdrawals, { ...values, importId, at });
  const byAccount = new Map<string, TransactionRow[]>();
  for (const row of stored) byAccount.set(row.bankAccountId, [...(byAccount.get(row.bankAccountId) ?? []), row]);
  for (const [bankAccountId, rows] of byAccount) {
    await recordEvents(
      tx,
      { organisationId: rows[0]!.organisationId, mode: rows[0]!.mode as 'live', bankAccountId, at },
      rows.map((row) => ({ type: 'transaction.withdrawn' as const, data: { object: transactionObject(row) } })),
    );
  }
  return stored.length;
}
