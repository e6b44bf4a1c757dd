import type { TransferTo } from '@pmatch/contracts';
import type { Db } from '@pmatch/db';
import type { PaymentPageBankAccount, PaymentPageOrder } from '../domain/payment-page';

export interface PaymentPageData {
  order: PaymentPageOrder;
  bankAccount: PaymentPageBankAccount;
}

/**
 * The order behind a payment token, with the account it is paid into as the order recorded it
 * (`transfer_to`); null when no order has the token. Only the columns the page shows are read; the transfer code only when the seller lets codes decide.
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
      transferTo: true,
      dedicated: true,
      customerReference: true,
    },
  });
  if (row === null) return null;
  const { organisationId, transferCode, transferTo, dedicated, customerReference, ...order } = row;
  // A code written before the name helps only where codes decide: elsewhere it would stand in the name's way.
  const settings = await db.setting.findUnique({ where: { organisationId_mode: { organisationId, mode: row.mode } }, select: { matchingRules: true } });
  const codesDecide = settings?.matchingRules.includes('transfer_code') === true;
  // The trigger orders_transfer_to writes it with every order, so a missing one is a broken database.
  if (transferTo === null) throw new Error(`the order of payment token …${paymentToken.slice(-4)} has no transfer_to`);
  const to = transferTo as TransferTo;
  const bankAccount: PaymentPageBankAccount = {
    bankCode: to.bank_code,
    bankName: to.bank_name,
    branchCode: to.branch_code,
    branchName: to.branch_name,
    accountType: to.account_type,
    accountNumber: to.account_number,
    holderName: to.holder_name,
    dedicated: !dedicated ? null : customerReference === null ? 'order' : 'buyer',
  };
  return { order: { ...order, transferCode: codesDecide ? transferCode : null }, bankAccount };
}
