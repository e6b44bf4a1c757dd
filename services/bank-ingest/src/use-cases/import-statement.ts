import { createHash } from 'node:crypto';
import { AppError, withoutControlCharacters } from '@pmatch/contracts';
import type { Database, Sql } from '@pmatch/db';
import type { OutboxPublisher } from '@pmatch/platform';
import type { BoundAccount } from '../domain/adapter-auth';
import { occurredAtOfDay, tokyoDay } from '../domain/statements/booking-time';
import { CamtParser } from '../domain/statements/camt';
import { StatementInvalid, type StatementAccount, type StatementEntry, type StatementFormat, type StatementParser } from '../domain/statements/statement';
import { ZenginParser } from '../domain/statements/zengin';
import type { IncomingTransaction } from '../domain/transaction';
import { beginImport, finishImport, storeImportedWithdrawals, type ImportedWithdrawal, type StatementImportRow } from '../data/statement-imports';
import { insertNewDeposits } from '../data/transactions';

/** The body of a statement import's answer (and of `ops statement import`). */
export interface StatementImportView extends Omit<StatementImportRow, 'createdAt'> {
  object: 'statement_import';
  created_at: string;
}

export interface ImportStatementRequest {
  /** The file from its start, in chunks; read twice (to check, then to store). */
  read: () => AsyncIterable<Uint8Array>;
  /** Asked for (`?format=`); detected from the first bytes when absent. */
  format?: StatementFormat;
  /** The account a statement names, if the importer may write to it; else throws (403). */
  accountOf: (account: StatementAccount, line: number) => Promise<BoundAccount>;
  adapterId?: string;
  receivedAt: Date;
}

export interface ImportStatementDeps {
  database: Database;
  /** This process's outbox relay; undefined (ops): none here, the rows wait unleased for a service's. */
  outbox?: OutboxPublisher;
  /** Told how many deposits the import stored for the first time, once they are committed. */
  onDepositsStored?: (count: number) => void;
}

/** Transactions stored by one statement (deposits, then withdrawals): what memory holds at once. */
const BATCH = 500;

/**
 * Checks the whole file (framing, lengths, every field, group and file totals, every account one
 * the importer may write to) and stores nothing if any check fails: 422 `statement_invalid` with
 * the record and the field, or the refusal of `accountOf`. Then reads it again and stores every
 * transaction as a notification would be (docs/decisions/0038-statement-import-in-two-passes.md),
 * all of the file in ONE database transaction, streamed in batches of `BATCH`: the import row,
 * every transaction, record and outbox row commit together or not at all, also when the process
 * dies half-way (docs/decisions/0161-statement-import-in-one-transaction.md). The deposits'
 * outbox rows are written unleased and the relay is nudged once they are committed.
 */
export async function importStatement(deps: ImportStatementDeps, request: ImportStatementRequest): Promise<StatementImportView> {
  const today = tokyoDay(request.receivedAt);
  const checked = await checkFile(request, today);
  const counts = { stored: 0, duplicates: 0, withdrawals: 0 };
  let depositsStored = 0;
  const finished = await deps.database.transaction(async (tx) => {
    const started = await beginImport(tx, {
      adapterId: request.adapterId,
      format: checked.format,
      sha256: checked.sha256,
      bytes: checked.bytes,
      accounts: checked.accounts.length,
      records: checked.records,
      at: request.receivedAt,
    });
    let batch: StatementEntry[] = [];
    const flush = async () => {
      const stored = await storeBatch(tx, started.id, batch, checked.accounts, request);
      counts.stored += stored.deposits + stored.withdrawals;
      counts.duplicates += batch.length - stored.deposits - stored.withdrawals;
      counts.withdrawals += stored.withdrawalsRead;
      depositsStored += stored.deposits;
      batch = [];
    };
    const parser = parserFor(checked.kind, today, request.receivedAt);
    for await (const chunk of request.read()) {
      for (const item of parser.write(chunk)) {
        if (item.kind !== 'entry') continue;
        batch.push(item.entry);
        if (batch.length >= BATCH) await flush();
      }
    }
    for (const item of parser.end()) if (item.kind === 'entry') batch.push(item.entry);
    await flush();
    return finishImport(tx, started.id, counts, request.receivedAt);
  });
  deps.onDepositsStored?.(depositsStored);
  if (counts.stored > 0) deps.outbox?.nudge();
  return {
    object: 'statement_import',
    id: finished.id,
    format: finished.format,
    accounts: finished.accounts,
    records: finished.records,
    stored: finished.stored,
    duplicates: finished.duplicates,
    withdrawals: finished.withdrawals,
    created_at: finished.createdAt.toISOString(),
  };
}

interface CheckedFile {
  kind: StatementFormat | 'camt';
  format: string;
  accounts: BoundAccount[];
  records: number;
  bytes: number;
  sha256: string;
}

async function checkFile(request: ImportStatementRequest, today: string): Promise<CheckedFile> {
  const hash = createHash('sha256');
  const accounts: BoundAccount[] = [];
  let parser: StatementParser | undefined;
  let kind: StatementFormat | 'camt' = 'zengin';
  let records = 0;
  let bytes = 0;
  try {
    for await (const chunk of request.read()) {
      hash.update(chunk);
      bytes += chunk.length;
      if (parser === undefined) {
        kind = request.format ?? detectFormat(chunk);
        parser = parserFor(kind, today, request.receivedAt);
      }
      for (const item of parser.write(chunk)) {
        if (item.kind === 'account') accounts.push(await request.accountOf(item.account, item.line));
        else records += 1;
      }
    }
    if (parser === undefined) throw new StatementInvalid(1, 'file', 'the file is empty');
    for (const item of parser.end()) {
      if (item.kind === 'account') accounts.push(await request.accountOf(item.account, item.line));
      else records += 1;
    }
  } catch (error) {
    if (error instanceof StatementInvalid) {
      throw new AppError('statement_invalid', error.message, { location: { line: error.line, field: error.field } });
    }
    throw error;
  }
  return { kind, format: parser.format, accounts, records, bytes, sha256: hash.digest('hex') };
}

function parserFor(kind: StatementFormat | 'camt', today: string, receivedAt: Date): StatementParser {
  return kind === 'zengin' ? new ZenginParser(today) : new CamtParser(kind === 'camt' ? undefined : kind, receivedAt);
}

/** XML (a declaration, a BOM or an element first) is camt; anything else is read as Zengin. */
function detectFormat(first: Uint8Array): 'zengin' | 'camt' {
  const text = Buffer.from(first.subarray(0, 64))
    .toString('latin1')
    .replace(/^\xef\xbb\xbf/, '')
    .trimStart();
  return text.startsWith('<') ? 'camt' : 'zengin';
}

/** One batch of the import, in its transaction `tx`: how many deposits and withdrawals were new, and how many withdrawals were read. */
async function storeBatch(
  tx: Sql,
  importId: string,
  entries: StatementEntry[],
  accounts: BoundAccount[],
  request: ImportStatementRequest,
): Promise<{ deposits: number; withdrawals: number; withdrawalsRead: number }> {
  const incoming = (entry: StatementEntry): IncomingTransaction => {
    const account = accounts[entry.account]!;
    return {
      organisationId: account.organisationId,
      mode: 'live',
      bankAccountId: account.id,
      bankReference: entry.bankReference,
      direction: entry.direction,
      amount: entry.amount,
      // As the bank wrote it, less control and format characters (the raw record keeps every byte).
      counterparty: withoutControlCharacters(entry.counterparty),
      occurredAt: entry.bookedAt ?? occurredAtOfDay(entry.bookingDay, request.receivedAt),
      ...(request.adapterId === undefined ? {} : { adapterId: request.adapterId }),
      ...(entry.remitterCode === undefined ? {} : { remitterCode: entry.remitterCode }),
      ...(entry.bankReversal === undefined ? {} : { bankReversal: entry.bankReversal }),
    };
  };
  const deposits = entries.filter((e) => e.direction === 'deposit');
  const withdrawals = entries.filter((e) => e.direction === 'withdrawal');
  // Deposits first: a cancellation in the same batch finds the deposit it names.
  const storedDeposits =
    deposits.length === 0
      ? []
      : await insertNewDeposits(
          tx,
          deposits.map((e) => ({ incoming: incoming(e), at: request.receivedAt })),
          () => undefined,
          { importId, records: deposits.map((e) => ({ line: e.line, raw: e.raw })) },
        );
  const storedWithdrawals = await storeImportedWithdrawals(
    tx,
    importId,
    withdrawals.map((e): ImportedWithdrawal => ({
      incoming: incoming(e),
      line: e.line,
      raw: e.raw,
      ...(e.cancels === undefined ? {} : { cancels: e.cancels }),
    })),
    request.receivedAt,
  );
  return { deposits: storedDeposits.filter((row) => row !== null).length, withdrawals: storedWithdrawals, withdrawalsRead: withdrawals.length };
}
