import type { PrismaClient, TransactionRow } from '@pmatch/db';
import type { CandidateOrder } from '../domain/decide';

/** The most open orders placed after a deposit that one explanation lists. */
export const LATER_ORDERS_LISTED = 20;

/**
 * The open orders of the deposit's account and amount placed after it (`ordered_at` >
 * `occurred_at`), oldest first: never its candidates, but what a person looking at it should see.
 */
export async function readLaterOrders(
  prisma: PrismaClient,
  deposit: Pick<TransactionRow, 'bankAccountId' | 'amount' | 'occurredAt'>,
): Promise<CandidateOrder[]> {
  const rows = await prisma.order.findMany({
    where: { bankAccountId: deposit.bankAccountId, amount: deposit.amount, status: 'open', orderedAt: { gt: deposit.occurredAt } },
    orderBy: { seq: 'asc' },
    take: LATER_ORDERS_LISTED,
  });
  return rows.map((r) => ({ id: r.id, status: 'open', payerName: r.payerName, orderedAt: r.orderedAt, expiresAt: r.expiresAt, transferCode: r.transferCode }));
}
