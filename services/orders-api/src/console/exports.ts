import type { OrderRow, TransactionRow } from '@pmatch/db';
import { tokyoClockOf, tokyoTime } from '../intl';
import type { CsvCell } from './csv';
import { TEXTS } from './texts';
import { reasonWords } from './words';

/**
 * The CSV files the deposit list offers an accountant, laid out as freee 会計's bank statement
 * upload (明細アップロード) reads a bank account's file: 取引日, 入出金額, 残高, 取引内容 first
 * (残高 empty: the service does not know the account's balance), then what the service adds. In
 * Japanese whatever the console's language, as the accounting software is (docs/decisions/0182).
 */

const ja = TEXTS.ja;
const STATEMENT_COLUMNS = ['取引日', '入出金額', '残高', '取引内容'] as const;

/** A day in Japan as freee reads it: 2026/12/06. */
function statementDay(at: Date): string {
  const c = tokyoClockOf(at);
  return `${c.year}/${String(c.month).padStart(2, '0')}/${String(c.day).padStart(2, '0')}`;
}

function statementCells(deposit: TransactionRow): CsvCell[] {
  return [statementDay(deposit.occurredAt), deposit.amount, null, deposit.counterparty];
}

export const DEPOSIT_CSV_HEADER = [...STATEMENT_COLUMNS, '入金日時', '状態', '判定理由', '注文番号', '入金ID'];

/** A deposit: when, how much and from whom; its status, why, and the order it paid when confirmed. */
export function depositCsvCells(deposit: TransactionRow, order: OrderRow | undefined): CsvCell[] {
  return [
    ...statementCells(deposit),
    tokyoTime(deposit.occurredAt),
    ja.deposits.statuses[deposit.status] ?? deposit.status,
    reasonWords(ja, (deposit.decision as { reason?: string } | null)?.reason),
    order?.externalId,
    deposit.id,
  ];
}

export const PAYMENT_CSV_HEADER = [...STATEMENT_COLUMNS, '注文番号', '支払者名', '注文金額', '確定日時', '確定の理由', '入金ID', '注文ID'];

/** A payment: the confirmed deposit and the order it paid. */
export function paymentCsvCells(deposit: TransactionRow, order: OrderRow | undefined): CsvCell[] {
  return [
    ...statementCells(deposit),
    order?.externalId,
    order?.payerName,
    order?.amount,
    deposit.decidedAt === null ? null : tokyoTime(deposit.decidedAt),
    reasonWords(ja, (deposit.decision as { reason?: string } | null)?.reason),
    deposit.id,
    deposit.orderId,
  ];
}

/** A file name that says what and when: deposits-held-test-20261206.csv. */
export function exportFileName(what: string, mode: string, now: Date): string {
  return `${what}-${mode}-${statementDay(now).replace(/\//g, '')}.csv`;
}
