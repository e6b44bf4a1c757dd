import type { BankAccount, CreateOrderRequest, CreatePaymentLinkRequest, Order, PaymentLink, Transaction } from '../api';
import type { BankNotification } from '../ingest';
import type { PayerAlias } from '../payer-aliases';
import { statusOfCode, typeOfStatus, type ErrorBody, type ErrorCode } from '../errors';
import type { Event, EventType } from '../events';
import type { Settings } from '../settings';
import type { WebhookDeliveryAttempt, WebhookEndpoint } from '../webhooks';

/**
 * The objects the document's examples show: one consistent story (an order for お米 5kg, paid by
 * a deposit from ヤマダ タロウ). Typed by the contracts, and checked against the document by test.
 */
export const EXAMPLE_IDS = {
  order: 'ord_4f8Kq2ZtW9mNcR7xLbV3aYp1',
  secondOrder: 'ord_8Bn3Vc5Xz7Lk9Jh2Gf4Ds6Aq0',
  bankAccount: 'ba_7Hs2KdP9qLmX4tRvN8cWz3eJ',
  transaction: 'txn_9Qw3ErT6yUi2OpAs5DfG8hJk',
  event: 'evt_2Lk9Jh7Gf5Ds3Aq1Wz8Xc6Vb',
  webhookEndpoint: 'we_5Tg7Yh9Uj2Ik4Ol6Pm8Nb1Vc',
  deliveryAttempt: 'dla_1024',
  request: 'req_6f1c2b9a0d3e4f5a8b7c6d5e4f3a2b1c',
  paymentLink: 'plink_3Vb8Nm1Qw4Er7Ty0Ui3Op6As',
  linkOrder: 'ord_6Gh1Jk4Lz7Xc0Vb3Nm6Qw9Er',
} as const;

const ORDERED_AT = '2026-11-24T03:15:27.412Z';
const DEPOSITED_AT = '2026-11-24T05:02:11.000Z';
const MATCHED_AT = '2026-11-24T05:02:11.655Z';

export const exampleCreateOrder: CreateOrderRequest = {
  amount: 5000,
  payer_name: 'ヤマダ タロウ',
  external_id: 'shop-order-10293',
  item_name: 'お米 5kg',
  metadata: { customer_id: 'c_4411' },
};

export const exampleOrder: Order = {
  id: EXAMPLE_IDS.order,
  object: 'order',
  livemode: false,
  status: 'open',
  amount: 5000,
  payer_name: 'ヤマダ タロウ',
  payer_name_bank_form: 'ﾔﾏﾀﾞ ﾀﾛｳ',
  payer_name_printable: true,
  external_id: 'shop-order-10293',
  item_name: 'お米 5kg',
  bank_account_id: EXAMPLE_IDS.bankAccount,
  ordered_at: ORDERED_AT,
  expires_at: '2026-12-08T03:15:27.412Z',
  closed_at: null,
  metadata: { customer_id: 'c_4411' },
  payment_url: 'https://pay.example.com/pay/Xk3vP9qLmT2wRz8nB5cY7dF4gH6jK1sA',
  source: null,
  payment_link_id: null,
  transfer_code: '4821737',
  dedicated_account: false,
  customer_reference: null,
  transfer_to: {
    bank_code: '0001',
    bank_name: 'テスト銀行',
    branch_code: '001',
    branch_name: '本店',
    account_type: 'ordinary',
    account_number: '1234567',
    holder_name: 'カ)テストシヨウテン',
  },
  payment: null,
  created_at: ORDERED_AT,
};

export const exampleCreatePaymentLink: CreatePaymentLinkRequest = {
  amount: 3000,
  item_name: '新米 2kg（数量限定）',
  use_limit: 50,
  expires_at: '2026-12-31T14:59:59.000Z',
  metadata: { campaign: 'winter' },
};

export const examplePaymentLink: PaymentLink = {
  id: EXAMPLE_IDS.paymentLink,
  object: 'payment_link',
  livemode: false,
  status: 'active',
  url: 'https://pay.example.com/link/Qm7Ks2Vd9Lp4Xw1Tz8Rb5Nc3Hf6Gj0Ya',
  amount: 3000,
  item_name: '新米 2kg（数量限定）',
  bank_account_id: EXAMPLE_IDS.bankAccount,
  metadata: { campaign: 'winter' },
  expires_at: '2026-12-31T14:59:59.000Z',
  use_limit: 50,
  use_count: 12,
  deactivated_at: null,
  created_at: '2026-11-20T09:00:00.000Z',
};

/** An order a buyer made at the example link, under a name in hiragana. */
export const exampleLinkOrder: Order = {
  ...exampleOrder,
  id: EXAMPLE_IDS.linkOrder,
  amount: 3000,
  item_name: '新米 2kg（数量限定）',
  payer_name: 'ｽｽﾞｷ ﾊﾅｺ',
  payer_name_bank_form: 'ｽｽﾞｷ ﾊﾅｺ',
  external_id: `${EXAMPLE_IDS.paymentLink}:Hx4Kq8Wm2Tz6Lp0Rv3Nc7Bd`,
  metadata: { campaign: 'winter' },
  payment_url: 'https://pay.example.com/pay/Wd5Rt8Yp1Kx4Mz7Qc0Vb3Nh6Lj9Fs2G',
  source: 'payment_link',
  payment_link_id: EXAMPLE_IDS.paymentLink,
};

export const examplePayment: NonNullable<Order['payment']> = {
  transaction_id: EXAMPLE_IDS.transaction,
  amount: 5000,
  counterparty: 'ヤマダ タロウ',
  occurred_at: DEPOSITED_AT,
  matched_at: MATCHED_AT,
  decided_by: 'auto',
  trigger: 'auto',
  reason: 'exact',
};

export const examplePaidOrder: Order = { ...exampleOrder, status: 'paid', closed_at: MATCHED_AT, payment: examplePayment };

export const exampleTransaction: Transaction = {
  id: EXAMPLE_IDS.transaction,
  object: 'transaction',
  livemode: false,
  direction: 'deposit',
  status: 'confirmed',
  order_id: EXAMPLE_IDS.order,
  amount: 5000,
  counterparty: 'ヤマダ タロウ',
  occurred_at: DEPOSITED_AT,
  bank_account_id: EXAMPLE_IDS.bankAccount,
  candidate_order_ids: [],
  decision: {
    reason: 'exact',
    candidates: [{ order_id: EXAMPLE_IDS.order, fit: 'exact', fit_rules: [], excluded_because: null, not_chosen_because: null }],
  },
  created_at: MATCHED_AT,
};

export const exampleHeldTransaction: Transaction = {
  ...exampleTransaction,
  status: 'held',
  order_id: null,
  candidate_order_ids: [EXAMPLE_IDS.order, EXAMPLE_IDS.secondOrder],
  decision: {
    reason: 'several_orders_fit',
    candidates: [EXAMPLE_IDS.order, EXAMPLE_IDS.secondOrder].map((order_id) => ({
      order_id,
      fit: 'exact',
      fit_rules: [],
      excluded_because: null,
      not_chosen_because: 'several_orders_fit' as const,
    })),
    near_misses: [],
  },
};

export const examplePayerAlias: PayerAlias = {
  id: 'pal_7Hq2Vx9Lm4Rt8Wz3Nc6Bp1Ks',
  object: 'payer_alias',
  livemode: false,
  bank_account_id: EXAMPLE_IDS.bankAccount,
  depositor_name: 'ﾔﾏﾀﾞ ﾊﾅｺ',
  payer_name: 'ヤマダ タロウ',
  created_by: 'user:usr_5Gh7Jk9Lm1Np3Qr5St7Vw9Xy',
  created_at: MATCHED_AT,
};

export const exampleBankAccount: BankAccount = {
  id: EXAMPLE_IDS.bankAccount,
  object: 'bank_account',
  livemode: false,
  bank_code: '0001',
  bank_name: 'テスト銀行',
  branch_code: '001',
  branch_name: '本店',
  account_number_last4: '4567',
  holder_name: 'カ)テストシヨウテン',
  dedicated: false,
  created_at: '2026-11-01T00:00:00.000Z',
};

export const exampleSettings: Settings = {
  object: 'settings',
  livemode: false,
  auto_confirm_late_orders: false,
  matching_rules: ['kana_width'],
};

export const exampleWebhookEndpoint: WebhookEndpoint = {
  id: EXAMPLE_IDS.webhookEndpoint,
  object: 'webhook_endpoint',
  livemode: false,
  url: 'https://shop.example.com/webhooks/payments',
  enabled_events: ['*'],
  enabled: true,
  disabled_reason: null,
  failing_since: null,
  created_at: '2026-11-20T09:00:00.000Z',
};

export const exampleSigningSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

export const exampleDeliveryAttempt: WebhookDeliveryAttempt = {
  id: EXAMPLE_IDS.deliveryAttempt,
  object: 'webhook_delivery_attempt',
  livemode: false,
  endpoint_id: EXAMPLE_IDS.webhookEndpoint,
  event_id: EXAMPLE_IDS.event,
  event_type: 'order.paid',
  attempt: 1,
  status_code: 200,
  duration_ms: 84,
  error: null,
  attempted_at: '2026-11-24T05:02:12.031Z',
  delivery_status: 'succeeded',
};

/** One example event of each type, as GET /v1/events lists it and a webhook delivers it. */
export const exampleEvents: { [T in EventType]: Extract<Event, { type: T }> } = (() => {
  const envelope = { id: EXAMPLE_IDS.event, object: 'event' as const, livemode: false, created_at: MATCHED_AT };
  const canceled = { ...exampleOrder, status: 'canceled' as const, closed_at: MATCHED_AT };
  const expired = { ...exampleOrder, status: 'expired' as const, closed_at: exampleOrder.expires_at };
  return {
    'order.created': { ...envelope, type: 'order.created', created_at: ORDERED_AT, data: { object: exampleOrder } },
    'order.updated': { ...envelope, type: 'order.updated', data: { object: { ...exampleOrder, amount: 5500 } } },
    'order.paid': { ...envelope, type: 'order.paid', data: { object: examplePaidOrder } },
    'order.canceled': { ...envelope, type: 'order.canceled', data: { object: canceled } },
    'order.expired': { ...envelope, type: 'order.expired', data: { object: expired } },
    'order.payment_reversed': { ...envelope, type: 'order.payment_reversed', data: { object: exampleOrder, previous_payment: examplePayment } },
    'transaction.deposited': { ...envelope, type: 'transaction.deposited', data: { object: exampleTransaction } },
    'transaction.withdrawn': {
      ...envelope,
      type: 'transaction.withdrawn',
      data: { object: { ...exampleTransaction, direction: 'withdrawal', status: 'confirmed', order_id: null, decision: null } },
    },
    'transaction.held': {
      ...envelope,
      type: 'transaction.held',
      data: { object: exampleHeldTransaction, candidate_order_ids: exampleHeldTransaction.candidate_order_ids },
    },
    'webhook.test': {
      ...envelope,
      id: 'evt_test_3Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl',
      type: 'webhook.test',
      data: { object: { message: 'A test event from the payment service.' } },
    },
  };
})();

export const exampleBankNotification: BankNotification = {
  bank_account_id: EXAMPLE_IDS.bankAccount,
  bank_reference: '20261124-000123',
  direction: 'deposit',
  amount: 5000,
  counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
  occurred_at: DEPOSITED_AT,
};

/** A message and, where the API names one, the parameter, for each error code's example. */
const ERROR_EXAMPLES: Record<ErrorCode, { message: string; param?: string }> = {
  parameter_missing: { message: 'Missing required parameter: amount.', param: 'amount' },
  parameter_invalid: { message: 'Invalid amount: Too small: expected number to be >=1.', param: 'amount' },
  parameter_unknown: { message: 'Unknown parameter: amout.', param: 'amout' },
  invalid_json: { message: 'The request body is not valid JSON.' },
  body_too_large: { message: 'The request body exceeds 1048576 bytes.' },
  statement_invalid: { message: 'Record 12, field 振込合計金額: the trailer says 150000, the data records sum to 145000.' },
  account_not_allowed: { message: 'This adapter is not bound to the bank account of this transaction.', param: 'bank_account_id' },
  ordered_at_in_future: { message: 'ordered_at may be at most 5 minutes in the future.', param: 'ordered_at' },
  invalid_api_key: { message: 'Invalid API key: it is unknown or has been revoked.' },
  insufficient_scope: { message: 'This API key is read-only; use a read-write key for this request.' },
  resource_missing: { message: `No such order: ${EXAMPLE_IDS.order}.`, param: 'id' },
  external_id_conflict: { message: 'An order with this external_id already exists with different content.', param: 'external_id' },
  transaction_not_matchable: { message: 'The order is on another bank account or has another amount than the deposit.', param: 'order_id' },
  order_taken: { message: 'The order has already been paid.', param: 'order_id' },
  reverse_window_passed: { message: 'The payment was confirmed more than 24 hours ago; it can be reversed only on the seller screen.' },
  order_not_open: { message: 'The order cannot be canceled: it is not open, or it is managed by a shop platform.' },
  no_dedicated_account_free: { message: 'No dedicated transfer account is free; add accounts to the pool (ops bank-account add --dedicated) or retry later.' },
  open_order_with_same_amount: { message: `An open order with the same amount exists (${EXAMPLE_IDS.order}); match or cancel it first.` },
  transaction_not_excludable: { message: 'A confirmed transaction cannot be excluded.' },
  transaction_not_excluded: { message: 'The transaction is unmatched, not excluded.' },
  idempotency_key_reused: { message: 'This Idempotency-Key was used with a different request.', param: 'Idempotency-Key' },
  idempotency_key_in_use: { message: 'A request with this Idempotency-Key is still being processed; retry shortly.' },
  endpoint_limit_reached: { message: 'At most 5 webhook endpoints per mode; delete one before adding another.' },
  url_not_allowed: { message: 'Only https URLs are accepted.', param: 'url' },
  secret_unavailable: { message: "This endpoint's signing secret cannot be read; rotate it (POST …/rotate-secret) to get a new one." },
  rate_limited: { message: 'Too many requests for this API key; retry after the time in Retry-After.' },
  service_unavailable: { message: 'The service is briefly unable to reach its database; retry later.' },
  internal_error: { message: 'An internal error occurred. It has been logged; retry later.' },
};

export function exampleError(code: ErrorCode): ErrorBody {
  const { message, param } = ERROR_EXAMPLES[code];
  return {
    error: { type: typeOfStatus(statusOfCode(code)), code, message, ...(param === undefined ? {} : { param }), request_id: EXAMPLE_IDS.request },
  };
}
