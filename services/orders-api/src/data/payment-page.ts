import type { Db } from '@pmatch/db';
import type { PaymentPageBankAccount, PaymentPageOrder } from '../domain/payment-page';

export interface PaymentPageData {
  order: PaymentPageOrder;
  bankAccount: PaymentPageBankAccount;
}

/**
 * The order behind a payment token, with the account it is paid into; null when no order has the
 * token. Only the columns the page shows are read.
 */
export async function findPaymentPageData(db: Db, paymentToken: string): Promise<PaymentPageData | null> {
  const order = await db.order.findUnique({
    where: { paymentToken },
    select: { status: true, mode: true, amount: true, itemName: true, payerName: true, expiresAt: true, bankAccountId: true },
  });
  if (order === null) return null;
  const bankAccount = await db.bankAccount.findUnique({
    where: { id: order.bankAccountId },
    select: { bankCode: true, bankName: true, branchCode: true, branchName: true, accountNumber: true, holderName: true },
  });
  // orders.bank_account_id references bank_accounts, so a missing account is a broken database.
  if (bankAccount === null) throw new Error(`bank account ${order.bankAccountId} of an order is missing`);
  return { order, bankAccount };
}
