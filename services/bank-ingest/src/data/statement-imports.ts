import { newId } from '@pmatch/contracts';
import { Prisma, recordEvents, transactionFields, transactionView, type PrismaClient, type TransactionRow } from '@pmatch/db';
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

/** Records an import before its first transaction is stored (they refer to it). */
export async function beginImport(
  prisma: PrismaClient,
  input: { adapterId: string | undefined; format: string; sha256: string; bytes: number; accounts: number; records: number; at: Date },
): Promise<StatementImportRow> {
  return prisma.statementImport.create({
    data: {
      id: newId('statementImport'),
      adapterId: input.adapterId ?? null,
      format: input.format,
      fileSha256: input.sha256,
      fileBytes: BigInt(input.bytes),
      accounts: input.accounts,
      records: input.records,
      status: 'storing',
      createdAt: input.at,
    },
    select: IMPORT_FIELDS,
  });
}

export async function finishImport(
  prisma: PrismaClient,
  id: string,
  counts: { stored: number; duplicates: number; withdrawals: number },
  at: Date,
): Promise<StatementImportRow> {
  return prisma.statementImport.update({ where: { id }, data: { ...counts, status: 'stored', finishedAt: at }, select: IMPORT_FIELDS });
}

const IMPORT_FIELDS = { id: true, format: true, accounts: true, records: true, stored: true, duplicates: true, withdrawals: true, createdAt: true } as const;

export interface ImportedWithdrawal {
  incoming: IncomingTransaction;
  line: number;
  raw: Uint8Array;
  /** The bank reference of the deposit a cancellation names. */
  cancels?: string;
}

/**
 * Withdrawals of an import, many in one DB transaction: each stored once per (account,
 * reference) with its raw record, linked to the deposit it cancels when that one is stored, and
 * announced by `transaction.withdrawn` as a notified withdrawal is. Returns how many were new.
 */
export async function storeImportedWithdrawals(prisma: PrismaClient, importId: string, withdrawals: ImportedWithdrawal[], at: Date): Promise<number> {
  if (withdrawals.length === 0) return 0;
  const ids = withdrawals.map(() => newId('transaction'));
  const column = <T>(value: (w: ImportedWithdrawal) => T) => withdrawals.map(value);
  return prisma.$transaction(async (tx) => {
    const stored = await tx.$queryRaw<TransactionRow[]>`
      WITH incoming AS (
        SELECT * FROM unnest(${ids}::text[], ${column((w) => w.incoming.organisationId)}::text[], ${column((w) => w.incoming.mode)}::text[],
          ${column((w) => w.incoming.bankAccountId)}::text[], ${column((w) => w.incoming.bankReference)}::text[], ${column((w) => String(w.incoming.amount))}::bigint[],
          ${column((w) => w.incoming.counterparty)}::text[], ${column((w) => w.incoming.occurredAt)}::timestamptz[], ${column((w) => w.incoming.adapterId ?? null)}::text[],
          ${column((w) => w.line)}::int[], ${column((w) => Buffer.from(w.raw).toString('hex'))}::text[], ${column((w) => w.cancels ?? null)}::text[],
          ${column((w) => w.incoming.remitterCode ?? null)}::text[], ${column((w) => w.incoming.bankReversal ?? false)}::boolean[])
          WITH ORDINALITY AS w(id, organisation_id, mode, bank_account_id, bank_reference, amount, counterparty, occurred_at, adapter_id, line, raw, cancels,
                               remitter_code, bank_reversal, n)),
      stored AS (
        INSERT INTO transactions
          (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at, adapter_id,
           statement_import_id, remitter_code, bank_reversal)
        SELECT id, organisation_id, mode, bank_account_id, bank_reference, 'withdrawal', 'unmatched', amount, counterparty, occurred_at, ${at}, ${at}, adapter_id,
               ${importId}, remitter_code, bank_reversal
        FROM incoming ORDER BY n
        ON CONFLICT (bank_account_id, bank_reference) DO NOTHING
        RETURNING ${Prisma.raw(transactionFields())}),
      recorded AS (
        INSERT INTO statement_records (transaction_id, statement_import_id, line, raw, cancels_transaction_id)
        SELECT w.id, ${importId}, w.line, decode(w.raw, 'hex'),
          (SELECT d.id FROM transactions d WHERE d.bank_account_id = w.bank_account_id AND d.bank_reference = w.cancels AND d.direction = 'deposit')
        FROM incoming w WHERE w.id IN (SELECT id FROM stored))
      SELECT * FROM stored`;
    const byAccount = new Map<string, TransactionRow[]>();
    for (const row of stored) byAccount.set(row.bankAccountId, [...(byAccount.get(row.bankAccountId) ?? []), row]);
    for (const [bankAccountId, rows] of byAccount) {
      await recordEvents(
        tx,
        { organisationId: rows[0]!.organisationId, mode: rows[0]!.mode as 'live', bankAccountId, at },
        rows.map((row) => ({
          type: 'transaction.withdrawn' as const,
          data: { object: transactionView(row) },
        })),
      );
    }
    return stored.length;
  });
}
