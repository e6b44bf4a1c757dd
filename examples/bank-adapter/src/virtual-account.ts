import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Notification } from './adapter';

/**
 * A deposit into a dedicated transfer account (振込入金口座, virtual account), as a bank pushes it
 * to its customer: modelled on GMO あおぞらネット銀行's deposit notification, one message per
 * deposit, the virtual account in `vaTransaction` and the real account it lands in in `account`.
 * Only the fields the adapter reads are typed; check your bank's specification for the rest.
 */
export interface VirtualAccountDepositMessage {
  messageId: string;
  /** When the bank sent it, ISO 8601 with an offset. */
  timestamp: string;
  account: { raId: string; raBranchCode: string; raAccountNumber: string };
  vaTransaction: {
    vaId: string;
    /** 取引日 YYYY-MM-DD. */
    transactionDate: string;
    vaBranchCode: string;
    vaAccountNumber: string;
    /** 入金金額, digits as text. */
    depositAmount: string;
    /** 振込依頼人名, half-width kana as the bank prints it. */
    remitterNameKana: string;
    /** 明細キー: unique per virtual account. */
    itemKey: string;
  };
}

/** GMO あおぞらネット銀行's bank code. */
export const GMO_AOZORA_BANK_CODE = '0310';

/**
 * Whether the message is the bank's: a base64 HMAC-SHA256 of the raw body under the secret the
 * bank gave you, in the header the bank names (`x-webhook-signature` in this model). Compare the
 * raw bytes, before any JSON parse.
 */
export function verifyBankSignature(bankSecret: string, rawBody: Uint8Array, signature: string | undefined): boolean {
  if (signature === undefined) return false;
  const expected = createHmac('sha256', bankSecret).update(rawBody).digest();
  const given = Buffer.from(signature, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The notification to push to bank-ingest for the message: the deposit on the virtual account
 * (bank-ingest finds it by bank, branch, type and number, as it was added with
 * `ops bank-account add --dedicated`), its bank reference made of the virtual account and its
 * 明細キー, so a message the bank sends again stores nothing new. Throws on a message that is not one.
 */
export function notificationOfVirtualAccountDeposit(message: VirtualAccountDepositMessage, bankCode: string = GMO_AOZORA_BANK_CODE): Notification {
  const va = message.vaTransaction;
  const problems = [
    /^[0-9]{3}$/.test(va.vaBranchCode) ? null : 'vaBranchCode must be 3 digits',
    /^[0-9]{7}$/.test(va.vaAccountNumber) ? null : 'vaAccountNumber must be 7 digits',
    /^[1-9][0-9]{0,9}$/.test(va.depositAmount) ? null : 'depositAmount must be a positive whole number',
    va.remitterNameKana.trim() !== '' ? null : 'remitterNameKana must not be empty',
    va.vaId !== '' && va.itemKey !== '' ? null : 'vaId and itemKey are required',
    Number.isNaN(Date.parse(message.timestamp)) ? 'timestamp must be a date and time' : null,
  ].filter((problem) => problem !== null);
  if (problems.length > 0) throw new Error(`not a virtual-account deposit: ${problems.join('; ')}`);
  return {
    account: { bank_code: bankCode, branch_code: va.vaBranchCode, account_type: 'ordinary', account_number: va.vaAccountNumber },
    bank_reference: `va:${va.vaId}:${va.itemKey}`,
    direction: 'deposit',
    amount: Number(va.depositAmount),
    counterparty: va.remitterNameKana,
    occurred_at: new Date(message.timestamp).toISOString(),
  };
}
