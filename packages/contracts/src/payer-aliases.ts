import { BankAccountId, ListQuery, Timestamp } from './api';
import { idPattern } from './ids';
import { z } from './zod';

export const PayerAliasId = z.string().regex(idPattern('payerAlias'), 'must be a payer alias id (pal_…)');

/** A payer a person taught the service: this depositor name, as the bank prints it, pays for this payer name on this account. */
export const PayerAlias = z
  .object({
    id: PayerAliasId,
    object: z.literal('payer_alias'),
    livemode: z.boolean(),
    bank_account_id: BankAccountId,
    depositor_name: z.string().openapi({ description: 'The depositor name as the bank printed it on the deposit the person matched.' }),
    payer_name: z.string().openapi({ description: 'The payer name of the order the person matched it to.' }),
    created_by: z.string().openapi({ description: 'Who taught it: `api_key:key_…` or `user:usr_…`.' }),
    created_at: Timestamp,
  })
  .openapi('PayerAlias');
export type PayerAlias = z.infer<typeof PayerAlias>;

export const DeletedPayerAlias = z.object({ id: PayerAliasId, object: z.literal('payer_alias'), deleted: z.literal(true) }).openapi('DeletedPayerAlias');

export const PayerAliasListQuery = ListQuery.extend({
  bank_account_id: BankAccountId.optional().openapi({ description: 'Only the payers remembered on this bank account.' }),
});
