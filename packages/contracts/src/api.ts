import { z } from './zod';
import { idPattern } from './ids';
import { LIMITS } from './limits';
import { TRANSFER_CODE_PATTERN } from './transfer-codes';
import { CUSTOMER_REFERENCE_ASKED, DEDICATED_ACCOUNT_ASKED, DEDICATED_ORDER_FIELDS } from './dedicated-accounts';

/** RFC 3339 with an explicit offset; we always write UTC with milliseconds. */
export const Timestamp = z.iso.datetime({ offset: true });

/**
 * A nullable enum as a union: the OpenAPI 3.1 generator writes `.nullable()` on an enum as
 * type [string, null] with an enum lacking null, which no null value satisfies.
 */
const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

export const Amount = z.int().min(LIMITS.amountMin).max(LIMITS.amountMax);

export const OrderId = z.string().regex(idPattern('order'), 'must be an order id (ord_…)');
export const TransactionId = z.string().regex(idPattern('transaction'), 'must be a transaction id (txn_…)');
export const BankAccountId = z.string().regex(idPattern('bankAccount'), 'must be a bank account id (ba_…)');
export const PaymentLinkId = z.string().regex(idPattern('paymentLink'), 'must be a payment link id (plink_…)');
export const EventId = z.string().regex(/^evt_(test_)?[0-9A-Za-z]{12,40}$/, 'must be an event id (evt_…)');

export const ORDER_STATUSES = ['open', 'paid', 'paid_outside', 'canceled', 'expired'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const TRANSACTION_STATUSES = ['pending', 'confirmed', 'held', 'unmatched', 'excluded'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export const DIRECTIONS = ['deposit', 'withdrawal'] as const;
export type Direction = (typeof DIRECTIONS)[number];

/**
 * Text a client sends: well-formed Unicode (no lone surrogates, which UTF-8 cannot store) and
 * without NUL, which PostgreSQL text cannot hold. Names also refuse every other control character.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const Text = (max: number, min = 0) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !LONE_SURROGATE.test(s) && !s.includes('\u0000'), { message: 'must be well-formed Unicode text without NUL characters' });
/** Text of a name or an identifier a client sends: `Text` without control characters. */
export const NameText = (max: number, min = 0) =>
  Text(max, min).refine((s) => !/[\u0000-\u001f\u007f]/.test(s), { message: 'must not contain control characters' });

export const Metadata = z.record(Text(LIMITS.metadataKeyMax, 1), Text(LIMITS.metadataValueMax)).refine((m) => Object.keys(m).length <= LIMITS.metadataKeysMax, {
  message: `must have at most ${LIMITS.metadataKeysMax} keys`,
});

export const Payment = z
  .object({
    transaction_id: TransactionId.nullable(),
    amount: z.int(),
    counterparty: z.string(),
    occurred_at: Timestamp,
    matched_at: Timestamp,
    decided_by: z.string(),
    trigger: z.string(),
    reason: z.string(),
  })
  .openapi('Payment');
export type Payment = z.infer<typeof Payment>;

/** Who reversed a payment, from where, and why (a reason is required on the seller screen after 24 hours). */
export const Reversal = z.object({
  decided_by: z.string(),
  trigger: z.string(),
  reason: z.string().nullable(),
  reversed_at: Timestamp,
});
export type Reversal = z.infer<typeof Reversal>;

export const Order = z
  .object({
    id: OrderId,
    object: z.literal('order'),
    livemode: z.boolean(),
    status: z.enum(ORDER_STATUSES),
    amount: z.int(),
    payer_name: z.string(),
    payer_name_bank_form: z
      .string()
      .nullable()
      .openapi({
        description:
          "The payer name as a bank prints a transfer's sender (Zengin: half-width katakana, upper-case Latin, digits, a few signs): " +
          'what to expect on deposits that pay this order. Null when a bank cannot print the name.',
      }),
    payer_name_printable: z.boolean().openapi({
      description:
        'False when the payer name holds characters no bank prints (kanji, most symbols): no deposit can then carry the name, ' +
        'so none is matched to the order automatically. Its deposit is held for a person to confirm.',
    }),
    external_id: z.string(),
    item_name: z.string(),
    bank_account_id: BankAccountId,
    ordered_at: Timestamp,
    expires_at: Timestamp,
    closed_at: Timestamp.nullable(),
    metadata: z.record(z.string(), z.string()),
    payment_url: z.url(),
    source: orNull(z.enum(['shop', 'payment_link'])).openapi({
      description: 'null for an order registered through the API; `shop` from a shop platform; `payment_link` made by the buyer at a payment link.',
    }),
    payment_link_id: PaymentLinkId.nullable().openapi({ description: 'The payment link the buyer made the order at, when `source` is `payment_link`.' }),
    transfer_code: z
      .string()
      .regex(TRANSFER_CODE_PATTERN)
      .nullable()
      .openapi({
        description:
          'Seven digits the buyer writes before their name in the transfer (振込依頼人名), or the bank sends as 振込依頼人コード: ' +
          "a deposit carrying it and the order's amount pays this order (rule `transfer_code`). Unique among the open orders of the " +
          'bank account; null for orders made before codes were issued.',
        example: '4821737',
      }),
    ...DEDICATED_ORDER_FIELDS,
    payment: Payment.nullable(),
    created_at: Timestamp,
  })
  .openapi('Order');
export type Order = z.infer<typeof Order>;

/**
 * Why an order with the deposit's amount is not the one the deposit was confirmed for. For the
 * orders a held deposit lists in `candidate_order_ids`, the decision's own reason
 * (`several_orders_fit`, `expired_order_fits`, `only_expired_orders_fit`, `too_many_candidates`,
 * `late_order`, `several_deposits_fit_late_order`); for the others, what ruled the order out.
 */
export const NOT_CHOSEN_REASONS = [
  'ordered_after_deposit',
  'name_differs',
  'expired',
  'several_orders_fit',
  'expired_order_fits',
  'only_expired_orders_fit',
  'too_many_candidates',
  'late_order',
  'several_deposits_fit_late_order',
  'possible_duplicate',
  'bank_reversal',
  'transfer_code_amount_differs',
  'transfer_code_order_not_open',
  'transfer_code_name_differs',
  'transfer_code_names_another_order',
  'dedicated_account_order_closed',
  'dedicated_account_amount_differs',
] as const;
export type NotChosenReason = (typeof NOT_CHOSEN_REASONS)[number];

/** What an amount difference most likely is: a transfer fee the payer deducted, or another small difference. */
export const NEAR_MISS_KINDS = ['transfer_fee', 'small_difference'] as const;
export type NearMissKind = (typeof NEAR_MISS_KINDS)[number];

/**
 * An open order of the deposit's account whose name fits but whose amount differs a little. Never
 * confirmed: the amount must be equal. A person may mark the order paid and exclude the deposit.
 */
export const NearMiss = z
  .object({
    order_id: OrderId,
    /** The deposit's amount minus the order's: negative when the deposit is short. */
    amount_difference: z.int(),
    likely: z.enum(NEAR_MISS_KINDS),
    /** How the name fitted, as in `candidates[].fit`; `rule:<name>` may be a rule the seller has not enabled. */
    fit: z.string(),
  })
  .openapi('NearMiss');
export type NearMiss = z.infer<typeof NearMiss>;

/**
 * Why a deposit was decided as it was: the reason, and how each order with its amount fitted.
 * `reason` is the fit that confirmed it (`exact`, `rule:<name>`), why it was held or left
 * unmatched (`several_orders_fit`, `expired_order_fits`, `only_expired_orders_fit`,
 * `no_name_fits`, `too_many_candidates`, `late_order`, `several_deposits_fit_late_order`,
 * `possible_duplicate`, `bank_reversal`, `transfer_code_amount_differs`,
 * `transfer_code_order_not_open`, `transfer_code_name_differs`, `dedicated_account_order_closed`,
 * `dedicated_account_amount_differs`, `no_order_with_amount`), or the
 * person's operation (`manual`, `payment_reversed`, `excluded`, `restored`, which list no candidates).
 */
export const Decision = z
  .object({
    reason: z.string(),
    /** For `possible_duplicate`: the stored deposit this one repeats (same account, amount, name and day). */
    duplicate_of: TransactionId.optional(),
    /** The transfer code the deposit carried and the order it names, when it names one on the account. */
    transfer_code: z.object({ code: z.string(), order_id: OrderId }).optional(),
    /** A deposit into a dedicated transfer account: the order it was last given to (or its buyer's latest), null when never given. */
    dedicated_account: z
      .object({ order_id: OrderId.nullable(), order_status: z.enum(ORDER_STATUSES).nullable(), customer_reference: z.string().nullable() })
      .optional(),
    /** Held and unmatched deposits: open orders whose name fits and whose amount differs a little. */
    near_misses: z.array(NearMiss).optional(),
    candidates: z.array(
      z.object({
        order_id: OrderId,
        /** How the payer name fitted the depositor name (`exact`, `rule:<name>`), null when it did not. */
        fit: z.string().nullable(),
        /** The matching rules the fit needed: [] for an exact fit, null when the name did not fit. */
        fit_rules: z.array(z.string()).nullable(),
        excluded_because: orNull(z.enum(['expired', 'ordered_after_deposit'])),
        /** Null for the order the deposit was confirmed for. Absent from decisions recorded before it existed. */
        not_chosen_because: orNull(z.enum(NOT_CHOSEN_REASONS)).optional(),
        /**
         * Present when the name fits only under a rule the seller has not enabled (`rule:<name>`): such
         * an order is never confirmed, but it makes the deposit ambiguous.
         */
        would_fit: z.string().optional(),
        /**
         * True when the payer name is written in kanji (no rule can compare it) and the depositor
         * name is one of its readings: never confirmed by name, but it makes the deposit ambiguous.
         */
        possible_reading: z.literal(true).optional(),
      }),
    ),
  })
  .openapi('Decision');
export type Decision = z.infer<typeof Decision>;

export const Transaction = z
  .object({
    id: TransactionId,
    object: z.literal('transaction'),
    livemode: z.boolean(),
    direction: z.enum(DIRECTIONS),
    status: z.enum(TRANSACTION_STATUSES),
    order_id: OrderId.nullable(),
    amount: z.int(),
    counterparty: z.string(),
    occurred_at: Timestamp,
    bank_account_id: BankAccountId,
    /** Orders a person can choose from while the deposit is held. */
    candidate_order_ids: z.array(OrderId),
    decision: Decision.nullable(),
    created_at: Timestamp,
  })
  .openapi('Transaction');
export type Transaction = z.infer<typeof Transaction>;

export const BankAccount = z
  .object({
    id: BankAccountId,
    object: z.literal('bank_account'),
    livemode: z.boolean(),
    bank_code: z.string(),
    bank_name: z.string().nullable(),
    branch_code: z.string(),
    branch_name: z.string().nullable(),
    /** Only the last four digits: full account numbers never leave the service in lists or logs. */
    account_number_last4: z.string(),
    holder_name: z.string(),
    dedicated: z.boolean().openapi({ description: 'A dedicated transfer account (振込専用口座), given to orders with `dedicated_account: true`.' }),
    created_at: Timestamp,
  })
  .openapi('BankAccount');
export type BankAccount = z.infer<typeof BankAccount>;

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() });
}

const trimmedName = (max: number) => NameText(max).refine((s) => s.trim().length > 0, { message: 'must not be empty' });

export const CreateOrderRequest = z
  .strictObject({
    amount: Amount,
    payer_name: trimmedName(LIMITS.payerNameMax),
    external_id: NameText(LIMITS.externalIdMax, 1),
    item_name: NameText(LIMITS.itemNameMax, 1),
    bank_account_id: BankAccountId.optional(),
    ordered_at: Timestamp.optional(),
    expires_at: Timestamp.optional(),
    metadata: Metadata.optional(),
    dedicated_account: z.boolean().optional().openapi({ description: DEDICATED_ACCOUNT_ASKED }),
    customer_reference: NameText(LIMITS.customerReferenceMax, 1).optional().openapi({ description: CUSTOMER_REFERENCE_ASKED }),
  })
  .openapi('CreateOrderRequest');
export type CreateOrderRequest = z.infer<typeof CreateOrderRequest>;

export const CreateTestDepositRequest = z
  .strictObject({
    amount: Amount,
    counterparty: trimmedName(LIMITS.counterpartyMax),
    occurred_at: Timestamp.optional(),
    bank_account_id: BankAccountId.optional(),
  })
  .openapi('CreateTestDepositRequest');
export type CreateTestDepositRequest = z.infer<typeof CreateTestDepositRequest>;

export const UpdateOrderRequest = z
  .strictObject({
    amount: Amount.optional(),
    payer_name: trimmedName(LIMITS.payerNameMax).optional(),
    metadata: Metadata.optional(),
  })
  .refine((r) => Object.keys(r).length > 0, { message: 'give at least one of amount, payer_name, metadata' })
  .openapi('UpdateOrderRequest');
export type UpdateOrderRequest = z.infer<typeof UpdateOrderRequest>;

export const PAYMENT_LINK_STATUSES = ['active', 'deactivated', 'expired', 'used_up'] as const;
export type PaymentLinkStatus = (typeof PAYMENT_LINK_STATUSES)[number];

export const PaymentLink = z
  .object({
    id: PaymentLinkId,
    object: z.literal('payment_link'),
    livemode: z.boolean(),
    status: z.enum(PAYMENT_LINK_STATUSES).openapi({
      description: 'Whether buyers can order at the link now: `active`, or why not (`deactivated` first, then `used_up`, then `expired`).',
    }),
    url: z.url().openapi({ description: 'The page to give buyers: they enter the name they will transfer under and get a payment page.' }),
    amount: z.int(),
    item_name: z.string(),
    bank_account_id: BankAccountId,
    metadata: z.record(z.string(), z.string()).openapi({ description: 'Copied to every order made at the link.' }),
    expires_at: Timestamp.nullable().openapi({ description: 'After this, the link takes no more orders; null: it does not expire.' }),
    use_limit: z.int().nullable().openapi({ description: 'How many orders the link takes at most; null: no limit.' }),
    use_count: z.int().openapi({ description: 'Orders made at the link so far.' }),
    deactivated_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .openapi('PaymentLink');
export type PaymentLink = z.infer<typeof PaymentLink>;

export const CreatePaymentLinkRequest = z
  .strictObject({
    amount: Amount,
    item_name: NameText(LIMITS.itemNameMax, 1),
    bank_account_id: BankAccountId.optional(),
    expires_at: Timestamp.optional(),
    metadata: Metadata.optional(),
    use_limit: z.int().min(1).max(LIMITS.paymentLinkUseLimitMax).optional(),
  })
  .openapi('CreatePaymentLinkRequest');
export type CreatePaymentLinkRequest = z.infer<typeof CreatePaymentLinkRequest>;

export const MarkPaidRequest = z.strictObject({ paid_at: Timestamp.optional() }).openapi('MarkPaidRequest');
export type MarkPaidRequest = z.infer<typeof MarkPaidRequest>;

export const MatchTransactionRequest = z
  .strictObject({
    order_id: OrderId,
    remember_payer: z
      .boolean()
      .optional()
      .openapi({
        description:
          "Remember that this depositor name pays for the order's payer name on this bank account: a later deposit under it is " +
          'confirmed for an open order of that payer (rule `learned_payer`). Listed by GET /v1/payer-aliases.',
      }),
  })
  .openapi('MatchTransactionRequest');
export type MatchTransactionRequest = z.infer<typeof MatchTransactionRequest>;

export const EmptyRequest = z.strictObject({});

export const ListQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(LIMITS.listLimitMax)
    .default(LIMITS.listLimitDefault)
    .openapi({ description: 'How many objects a page holds at most.' }),
  starting_after: Text(64, 1).optional().openapi({ description: 'The id of the last object you have: the page starts after it.' }),
});

export const OrderListQuery = ListQuery.extend({
  status: z.enum(ORDER_STATUSES).optional().openapi({ description: 'Only orders in this status.' }),
  external_id: NameText(LIMITS.externalIdMax, 1).optional().openapi({ description: 'Only the order with this external_id.' }),
});

export const TransactionListQuery = ListQuery.extend({
  status: z.enum(TRANSACTION_STATUSES).optional().openapi({ description: 'Only transactions in this status.' }),
});
