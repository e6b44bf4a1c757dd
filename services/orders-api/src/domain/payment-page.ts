import { ORDER_STATUSES, type AccountType, type OrderStatus } from '@pmatch/contracts';

/** The buyer's pages speak Japanese by default, and English to whoever asks for it. */
export const PAGE_LANGUAGES = ['ja', 'en'] as const;
export type PageLanguage = (typeof PAGE_LANGUAGES)[number];

/** What the buyer needs to know about where the order stands. */
export type BuyerStatus = 'awaiting_payment' | 'payment_received' | 'expired' | 'canceled';

/** The page's address carries the order's payment token: 32 base62 characters from a CSPRNG. */

/** The order as the buyer's page needs it (a subset of the order row). */
export interface PaymentPageOrder {
  status: string;
  mode: string;
  amount: bigint;
  itemName: string;
  payerName: string;
  expiresAt: Date;
  /** The code to write before the name; null when the order has none or the seller does not let codes decide (rule `transfer_code`). */
  transferCode: string | null;
}

/** The account the buyer transfers into (a subset of the bank account row). */
export interface PaymentPageBankAccount {
  bankCode: string;
  bankName: string | null;
  branchCode: string;
  branchName: string | null;
  accountType: AccountType;
  accountNumber: string;
  holderName: string;
  /** A dedicated transfer account given to this order (`order`) or to its buyer for good (`buyer`); null for a shared one. */
  dedicated: 'order' | 'buyer' | null;
}

/**
 * The order's status as the buyer should read it at `now`. An open order past its deadline is
 * expired already: matching treats it so at decision time, even before the sweeper records it.
 */
export function buyerStatusOf(order: Pick<PaymentPageOrder, 'status' | 'expiresAt'>, now: Date): BuyerStatus {
  const status = orderStatusOf(order.status);
  switch (status) {
    case 'open':
      return now.getTime() > order.expiresAt.getTime() ? 'expired' : 'awaiting_payment';
    case 'paid':
    case 'paid_outside':
      return 'payment_received';
    case 'expired':
      return 'expired';
    case 'canceled':
      return 'canceled';
  }
}

function orderStatusOf(status: string): OrderStatus {
  if (!ORDER_STATUSES.includes(status as OrderStatus)) throw new Error(`order has unknown status ${status}`);
  return status as OrderStatus;
}
