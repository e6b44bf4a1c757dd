import {
  bankForm,
  type BankAccount,
  type Event,
  type MatchingRule,
  type Mode,
  type Order,
  type Payment,
  type PaymentLink,
  type PayerAlias,
  type Settings,
  type Transaction,
  type TransferTo,
} from '@pmatch/contracts';
import type { BankAccountRow, EventRow, OrderRow, PayerAliasRow, PaymentLinkRow, SettingRow, TransactionRow } from './client';

/** API objects from rows: the one place where columns become the API's snake_case shapes. */

const iso = (d: Date): string => d.toISOString();
const isoOrNull = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** Amounts are BIGINT in the database; every allowed amount is well inside Number's safe range. */
export function amountOf(value: bigint): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`amount ${value} is outside the safe integer range`);
  return n;
}

export function paymentUrl(publicBaseUrl: string, paymentToken: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/pay/${paymentToken}`;
}

/** The API's order object; `seq` is internal, so a row not yet inserted can be shown too. */
export function orderObject(row: Omit<OrderRow, 'seq'>, publicBaseUrl: string): Order {
  const payerNameBankForm = bankForm(row.payerName) ?? null;
  return {
    id: row.id,
    object: 'order',
    livemode: row.mode === 'live',
    status: row.status as Order['status'],
    amount: amountOf(row.amount),
    payer_name: row.payerName,
    payer_name_bank_form: payerNameBankForm,
    payer_name_printable: payerNameBankForm !== null,
    external_id: row.externalId,
    item_name: row.itemName,
    bank_account_id: row.bankAccountId,
    ordered_at: iso(row.orderedAt),
    expires_at: iso(row.expiresAt),
    closed_at: isoOrNull(row.closedAt),
    metadata: row.metadata as Record<string, string>,
    payment_url: paymentUrl(publicBaseUrl, row.paymentToken),
    source: row.source as Order['source'],
    payment_link_id: row.paymentLinkId,
    transfer_code: row.transferCode,
    dedicated_account: row.dedicated,
    customer_reference: row.customerReference,
    transfer_to: row.transferTo as TransferTo,
    payment: (row.payment ?? null) as Payment | null,
    created_at: iso(row.createdAt),
  };
}

export function paymentLinkUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/link/${token}`;
}

/** Whether buyers can order at a link at `now`, or why not; a deactivation outranks the rest. */
export function paymentLinkStatus(row: Pick<PaymentLinkRow, 'deactivatedAt' | 'useLimit' | 'useCount' | 'expiresAt'>, now: Date): PaymentLink['status'] {
  if (row.deactivatedAt !== null) return 'deactivated';
  if (row.useLimit !== null && row.useCount >= row.useLimit) return 'used_up';
  if (row.expiresAt !== null && now.getTime() >= row.expiresAt.getTime()) return 'expired';
  return 'active';
}

export function paymentLinkObject(row: PaymentLinkRow, publicBaseUrl: string, now: Date): PaymentLink {
  return {
    id: row.id,
    object: 'payment_link',
    livemode: row.mode === 'live',
    status: paymentLinkStatus(row, now),
    url: paymentLinkUrl(publicBaseUrl, row.token),
    amount: amountOf(row.amount),
    item_name: row.itemName,
    bank_account_id: row.bankAccountId,
    metadata: row.metadata as Record<string, string>,
    expires_at: isoOrNull(row.expiresAt),
    use_limit: row.useLimit,
    use_count: row.useCount,
    deactivated_at: isoOrNull(row.deactivatedAt),
    created_at: iso(row.createdAt),
  };
}

export function transactionObject(row: TransactionRow): Transaction {
  return {
    id: row.id,
    object: 'transaction',
    livemode: row.mode === 'live',
    direction: row.direction as Transaction['direction'],
    status: row.status as Transaction['status'],
    order_id: row.orderId,
    amount: amountOf(row.amount),
    counterparty: row.counterparty,
    occurred_at: iso(row.occurredAt),
    bank_account_id: row.bankAccountId,
    candidate_order_ids: row.candidateOrderIds,
    decision: (row.decision ?? null) as Transaction['decision'],
    created_at: iso(row.createdAt),
  };
}

export function payerAliasObject(row: PayerAliasRow): PayerAlias {
  return {
    id: row.id,
    object: 'payer_alias',
    livemode: row.mode === 'live',
    bank_account_id: row.bankAccountId,
    depositor_name: row.depositorName,
    payer_name: row.payerName,
    created_by: row.createdBy,
    created_at: iso(row.createdAt),
  };
}

export function bankAccountObject(row: BankAccountRow): BankAccount {
  return {
    id: row.id,
    object: 'bank_account',
    livemode: row.mode === 'live',
    bank_code: row.bankCode,
    bank_name: row.bankName,
    branch_code: row.branchCode,
    branch_name: row.branchName,
    account_number_last4: row.accountNumber.slice(-4),
    holder_name: row.holderName,
    dedicated: row.dedicated,
    created_at: iso(row.createdAt),
  };
}

/** The mode column of a row; the database CHECKs it, so anything else is corruption. */
export function modeOf(row: { mode: string }): Mode {
  if (row.mode !== 'test' && row.mode !== 'live') throw new Error(`row has invalid mode ${row.mode}`);
  return row.mode;
}

/** The event object of the API and of webhook bodies. */
export function eventObject(row: EventRow): Event {
  return {
    id: row.id,
    object: 'event',
    type: row.type,
    livemode: row.mode === 'live',
    created_at: iso(row.createdAt),
    data: row.data,
  } as Event;
}

/** What settings are, without whose they are: a stored row, or the defaults when there is none. */
export type SettingValues = Pick<SettingRow, 'mode' | 'autoConfirmLateOrders' | 'matchingRules'>;

export function settingsObject(row: SettingValues): Settings {
  return {
    object: 'settings',
    livemode: row.mode === 'live',
    auto_confirm_late_orders: row.autoConfirmLateOrders,
    matching_rules: row.matchingRules as MatchingRule[],
  };
}
