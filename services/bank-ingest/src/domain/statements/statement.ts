import type { AccountType } from '@pmatch/contracts';

export const STATEMENT_FORMATS = ['zengin', 'camt.054', 'camt.053'] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

/** An account as a statement names it (the 7-digit number, zero-padding removed). */
export interface StatementAccount {
  bankCode: string;
  branchCode: string;
  accountType: AccountType;
  accountNumber: string;
}

/** One transaction of a statement, as bank-ingest stores it. */
export interface StatementEntry {
  /** The record's number in its file (Zengin), or the line its entry starts on (camt). */
  line: number;
  /** Index of its account among the statement's accounts, in the order they appear. */
  account: number;
  direction: 'deposit' | 'withdrawal';
  /** A cancellation of an earlier deposit (Zengin 取消区分, camt reversal of a credit): the deposit's bank reference. */
  cancels?: string;
  /** The bank marked the entry as the reversal of an earlier one (Zengin 取消区分, camt RvslInd). */
  bankReversal?: true;
  /** The bank's 振込依頼人コード (Zengin), digits as written. */
  remitterCode?: string;
  amount: number;
  counterparty: string;
  /** The day the bank booked it (Asia/Tokyo), YYYY-MM-DD; the earlier of booking and value day. */
  bookingDay: string;
  /** The exact time, when the statement gives one (camt DtTm). */
  bookedAt?: Date;
  bankReference: string;
  raw: Uint8Array;
}

/** What a parser reports as it reads: an account (before its entries), or an entry. */
export type StatementItem = { kind: 'account'; line: number; account: StatementAccount } | { kind: 'entry'; entry: StatementEntry };

/** A statement parser fed the file chunk by chunk: every item completed so far, in file order. */
export interface StatementParser {
  readonly format: string;
  write(chunk: Uint8Array): StatementItem[];
  /** Once the whole file was written: the last items, after the checks that need the whole file. */
  end(): StatementItem[];
}

/** A file that fails a check: the record (1-based) and the field, and what is wrong. */
export class StatementInvalid extends Error {
  constructor(
    readonly line: number,
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'StatementInvalid';
  }
}
