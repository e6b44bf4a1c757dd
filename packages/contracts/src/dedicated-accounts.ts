import { z } from './zod';

/** What orders on dedicated transfer accounts (振込専用口座) show and ask for. */

/** 預金種目 as a bank account's identity carries it: 普通, 当座, 貯蓄. */
export const ACCOUNT_TYPES = ['ordinary', 'current', 'savings'] as const;

/** The account a buyer pays an order into, as the payment page prints it. */
export const TransferTo = z
  .object({
    bank_code: z.string(),
    bank_name: z.string().nullable(),
    branch_code: z.string(),
    branch_name: z.string().nullable(),
    account_type: z.enum(ACCOUNT_TYPES).openapi({ description: '預金種目: `ordinary` (普通), `current` (当座) or `savings` (貯蓄).' }),
    account_number: z.string().openapi({ description: 'The whole number: the buyer needs it to transfer.' }),
    holder_name: z.string().openapi({ description: "The holder's name as the bank prints it (口座名義)." }),
  })
  .openapi('TransferTo');
export type TransferTo = z.infer<typeof TransferTo>;

/** The fields of an order (`Order`) about where its buyer pays. */
export const DEDICATED_ORDER_FIELDS = {
  dedicated_account: z.boolean().openapi({
    description:
      'True when the order is on a dedicated transfer account (振込専用口座): given to this order alone, or to its buyer ' +
      '(`customer_reference`). A deposit into it with the amount pays the order under rule `dedicated_account`, whatever the name.',
  }),
  customer_reference: z.string().nullable().openapi({
    description: "The seller's reference of the buyer whose dedicated account the order is on (継続型); null otherwise.",
  }),
  transfer_to: TransferTo.openapi({
    description: 'Where the buyer transfers the money: the bank account of `bank_account_id`, as the payment page prints it.',
  }),
};

/** `CreateOrderRequest.dedicated_account`, as the API reference says it. */
export const DEDICATED_ACCOUNT_ASKED =
  'True: the order gets a dedicated transfer account of its own as its `bank_account_id` (or, with `customer_reference`, ' +
  "that buyer's). 409 `no_dedicated_account_free` when none is free. Leave out `bank_account_id` with it.";

/** `CreateOrderRequest.customer_reference`, as the API reference says it. */
export const CUSTOMER_REFERENCE_ASKED =
  "With `dedicated_account`: the seller's own reference of the buyer. Their first such order gives them a dedicated " +
  'account for good (継続型); every later order of theirs is on it.';
