import { Amount, BankAccountId, DIRECTIONS, NameText, Timestamp, TransactionId } from './api';
import { ACCOUNT_TYPES } from './dedicated-accounts';
import { LIMITS } from './limits';
import { z } from './zod';

/** What bank adapters send to bank-ingest, and what it answers. */

/**
 * The request header in which a bank adapter names itself (its `adp_…` id) on every request to
 * bank-ingest. A request naming no active adapter is refused before its body is read, and only the
 * named adapter's secret is tried on its signature.
 */
export const BANK_ADAPTER_ID_HEADER = 'bank-adapter-id';

export type AccountType = (typeof ACCOUNT_TYPES)[number];

/** A bank account as banks name it: 4-digit bank code, 3-digit branch code, type, 7-digit number. */
export const BankAccountIdentity = z
  .strictObject({
    bank_code: z.string().regex(/^[0-9]{4}$/, 'must be 4 digits'),
    branch_code: z.string().regex(/^[0-9]{3}$/, 'must be 3 digits'),
    account_type: z.enum(ACCOUNT_TYPES),
    account_number: z.string().regex(/^[0-9]{7}$/, 'must be 7 digits'),
  })
  .openapi('BankAccountIdentity');
export type BankAccountIdentity = z.infer<typeof BankAccountIdentity>;

/**
 * Body of POST /ingest/v1/notifications: the account by our id or as the bank names it
 * (exactly one of `bank_account_id` and `account`).
 */
export const BankNotification = z
  .strictObject({
    bank_account_id: BankAccountId.optional(),
    account: BankAccountIdentity.optional(),
    bank_reference: NameText(LIMITS.bankReferenceMax, 1),
    direction: z.enum(DIRECTIONS),
    amount: Amount,
    counterparty: NameText(LIMITS.counterpartyMax),
    occurred_at: Timestamp,
    remitter_code: z
      .string()
      .regex(/^[0-9]{1,10}$/, 'must be up to 10 digits')
      .optional()
      .openapi({ description: "The bank's 振込依頼人コード of a deposit, when it sends one (Zengin 01): it may carry the order's transfer code." }),
  })
  .superRefine((body, context) => {
    if ((body.bank_account_id === undefined) === (body.account === undefined)) {
      context.addIssue({ code: 'custom', path: ['bank_account_id'], message: 'give exactly one of bank_account_id and account' });
    }
  })
  .openapi('BankNotification');
export type BankNotification = z.infer<typeof BankNotification>;

/** The answer to POST /ingest/v1/statements: what one import read and stored. */
export const StatementImport = z
  .object({
    object: z.literal('statement_import'),
    id: z.string().openapi({ example: 'imp_2KWPBgLlAfxdpx2AI54pPJ85' }),
    format: z.enum(['zengin', 'camt.054', 'camt.053']),
    accounts: z.int().min(0).openapi({ description: 'Bank accounts the file covers.' }),
    records: z.int().min(0).openapi({ description: 'Transaction records read.' }),
    stored: z.int().min(0).openapi({ description: 'Transactions stored now (deposits and withdrawals).' }),
    duplicates: z.int().min(0).openapi({ description: 'Records already stored, by this file before or by a notification or another statement.' }),
    withdrawals: z.int().min(0).openapi({ description: 'Withdrawals among those stored, cancellations included.' }),
    created_at: Timestamp,
  })
  .openapi('StatementImport');
export type StatementImport = z.infer<typeof StatementImport>;

export const BankNotificationAccepted = z
  .object({
    transaction_id: TransactionId,
    duplicate: z.boolean(),
  })
  .openapi('BankNotificationAccepted');
