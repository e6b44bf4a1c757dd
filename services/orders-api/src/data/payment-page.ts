import type { Db } from '@pmatch/db';
import type { PaymentPageBankAccount, PaymentPageOrder } from '../domain/payment-page';

export interface PaymentPageData {
  order: PaymentPageOrder;
  bankAccount: PaymentPageBankAccount;
}

/**
 * The order behind a payment token, with the account it is paid into; null when no order has the
 * token. Only the columns the page shows are read; the transfer code only when the seller lets codes decide.
 */
export async function findPaymentPageData(db: Db, paymentToken: string): Promise<PaymentPageData | null> {
  const row = await db.order.findUnique({
    where: { paymentToken },
    select: {
      status: true,
      mode: true,
      amount: true,
      itemName: true,
      payerName: true,
      expiresAt: true,
      bankAccountId: true,
      organisationId: true,
      transferCode: true,
    },
  });
  if (row === null) return null;
  const { organisationId, transferCode, ...order } = row;
  // A code written before the name helps only where codes decide: elsewhere it would stand in the name's way.
  const settings = await db.setting.findUnique({ where: { organisationId_mode: { organisationId, mode: row.mode } }, select: { matchingRules: true } });
  const codesDecide = settings?.matchingRules.includes('transfer_code') === true;
  const bankAccount = await db.bankAccount.findUnique({
    where: { id: order.bankAccountId },
    select: { bankCode: true, bankName: true, branchCode: true, branchName: true, accountNumber: true, holderName: true },
  });
  // orders.bank_account_id references bank_accounts, so a missing account is a broken database.
  if (bankAccount === null) throw new Error(`bank account ${order.bankAccountId} of an order is missing`);
  return { order: { ...order, transferCode: codesDecide ? transferCode : null }, bankAccount };
}
