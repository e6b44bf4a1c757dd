import type { Direction, Mode, ReplyAddress } from '@pmatch/contracts';

/** A money movement reported by a bank (or a test deposit), as bank-ingest stores it. */
export interface IncomingTransaction {
  organisationId: string;
  mode: Mode;
  bankAccountId: string;
  bankReference: string;
  direction: Direction;
  amount: number;
  counterparty: string;
  occurredAt: Date;
  /** The bank adapter that brought it; none for test deposits and operators' imports. */
  adapterId?: string;
  /** The bank's 振込依頼人コード, digits as sent (it may carry an order's transfer code). */
  remitterCode?: string;
  /** The bank marked it as the reversal of an earlier entry (camt RvslInd). */
  bankReversal?: boolean;
  replyTo?: ReplyAddress;
}

/**
 * Deposits wait for the matcher's decision; withdrawals are never matched, so they are stored
 * already settled.
 */
export function initialStatus(direction: Direction): 'pending' | 'unmatched' {
  return direction === 'deposit' ? 'pending' : 'unmatched';
}

/** Test deposits get a reference derived from the request, so a redelivered request stores nothing new. */
export function testDepositReference(requestId: string): string {
  return `test_${requestId}`;
}
