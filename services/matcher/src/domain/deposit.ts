import { amountOf, type TransactionRow } from '@pmatch/db';
import type { DepositFacts } from './decide';

export function depositFacts(row: TransactionRow): DepositFacts {
  return { amount: amountOf(row.amount), counterparty: row.counterparty, occurredAt: row.occurredAt };
}
