import { z } from './zod';
import { WireError } from './errors';
import { MODES } from './ids';
import { Amount, BankAccountId, Decision, EventId, Order, OrderId, Timestamp, Transaction, TransactionId } from './api';
import { EVENT_TYPES } from './events';
import { MATCHING_RULES } from './settings';

/**
 * Broker topology. Names are prefixed per deployment (AMQP_PREFIX) so tests can isolate
 * themselves on one broker; the vhost in RABBITMQ_URL isolates as well.
 */
export const EXCHANGES = {
  bank: 'bank',
  events: 'events',
  deadLetter: 'dead-letter',
} as const;

export const ROUTING_KEYS = {
  depositReceived: 'deposit.received',
  orderRegistered: 'order.registered',
  eventRecorded: 'event.recorded',
  webhookRequested: 'webhook.requested',
} as const;

export const QUEUES = {
  matcherDeposits: 'matcher.deposits',
  matcherLateOrders: 'matcher.late-orders',
  matcherCommands: 'matcher.commands',
  bankIngestCommands: 'bank-ingest.commands',
  dispatcherEvents: 'webhook-dispatcher.events',
  dispatcherRequests: 'webhook-dispatcher.requests',
} as const;

/** Where a reply to a request goes once the request's effect is committed. */
export const ReplyAddress = z.object({ queue: z.string().min(1), correlation_id: z.string().min(1) });
export type ReplyAddress = z.infer<typeof ReplyAddress>;

/** bank → matcher: a stored deposit waits for its decision. */
export const DepositReceived = z.object({
  transaction_id: TransactionId,
  bank_account_id: BankAccountId,
  reply_to: ReplyAddress.optional(),
});
export type DepositReceived = z.infer<typeof DepositReceived>;

/**
 * A registered order, for the matcher to examine again the unmatched deposits it could explain
 * (same account and amount, not earlier than its ordered_at; docs/guide.md "Deposits and decisions").
 */
export const OrderRegistered = z.object({
  order_id: OrderId,
  bank_account_id: BankAccountId,
});
export type OrderRegistered = z.infer<typeof OrderRegistered>;

/**
 * An order's registration id: the id of an `order.registered` message it is first in, and the
 * matcher's inbox key of its late-order check, so that each order is checked once.
 */
export const ORDER_REGISTRATION_ID_PREFIX = 'registered_';
export const orderRegistrationId = (orderId: string): string => `${ORDER_REGISTRATION_ID_PREFIX}${orderId}`;

/** At most this many orders in one `order.registered` message. */
export const ORDERS_PER_REGISTRATION = 100;

/**
 * orders-api → matcher: orders that one statement registered, in the order written. One message
 * for all of them, not one each: a rush of new orders is written a batch per statement, and every
 * message costs an outbox row, a publish, a queue write and a delivery.
 */
export const OrdersRegistered = z.object({
  orders: z.array(OrderRegistered).min(1).max(ORDERS_PER_REGISTRATION),
});
export type OrdersRegistered = z.infer<typeof OrdersRegistered>;

/** At most this many events in one `event.recorded` message; a state change with more sends several. */
export const EVENTS_PER_ANNOUNCEMENT = 100;

/**
 * events → dispatcher: events that one state change committed (one organisation and mode), in
 * recorded order. One message for all of them, not one each: a confirmed deposit records two
 * events, and every message costs an outbox row, a publish and a queue write.
 */
export const EventsRecorded = z.object({
  organisation_id: z.string(),
  mode: z.enum(MODES),
  events: z
    .array(z.object({ event_id: EventId, type: z.enum(EVENT_TYPES) }))
    .min(1)
    .max(EVENTS_PER_ANNOUNCEMENT),
});
export type EventsRecorded = z.infer<typeof EventsRecorded>;

/** orders-api → bank-ingest request: store a test deposit exactly as a bank notification. */
export const CreateTestDepositCommand = z.object({
  type: z.literal('test_deposit.create'),
  organisation_id: z.string(),
  bank_account_id: BankAccountId,
  amount: Amount,
  counterparty: z.string(),
  occurred_at: Timestamp,
});
export type CreateTestDepositCommand = z.infer<typeof CreateTestDepositCommand>;

export const BankIngestCommand = z.discriminatedUnion('type', [CreateTestDepositCommand]);
export type BankIngestCommand = z.infer<typeof BankIngestCommand>;

/** Who asks the matcher, and the scope it must stay inside. */
const commandScope = {
  organisation_id: z.string(),
  mode: z.enum(MODES),
};

/**
 * Who decides and from where, as a payment records it: `api_key:key_…` by `api`, `user:usr_…` by
 * `dashboard` (the seller console). Commands from versions before the console carry neither and
 * are recorded as `api`.
 */
const decider = {
  decided_by: z.string().min(1).max(100).optional(),
  trigger: z.enum(['api', 'dashboard']).default('api'),
};

/**
 * The console's audit row of a decision a person asked for: the matcher writes it in the decision's
 * own transaction, so no decision stands without its row and no row without its decision.
 */
export const CommandAudit = z.object({
  user_id: z.string().min(1).max(100),
  user_email: z.string().max(320),
  ip: z.string().max(100).nullable(),
  action: z.string().min(1).max(100),
  detail: z.record(z.string(), z.unknown()),
});
export type CommandAudit = z.infer<typeof CommandAudit>;

const audited = { audit: CommandAudit.optional() };

/** Why a payment is reversed; the seller console requires it after the 24-hour window. */
export const REVERSAL_REASON_MAX = 500;

/** The most held deposits one rule preview lists, and one confirmation of it confirms. */
export const RULE_PREVIEW_MAX = 200;

const RuleSet = z.array(z.enum(MATCHING_RULES)).max(MATCHING_RULES.length);

/**
 * orders-api (and ops) → matcher requests: every change of a match decision goes through the
 * matcher, the only writer of decisions. `rules.preview` changes nothing: it decides the held
 * deposits again under other rules; `rules.confirm_previewed` confirms the pairs a person saw in
 * a preview, each only if deciding it again still gives that order. `deposit.explain` changes
 * nothing either: it decides one held or unmatched deposit again under the seller's rules and the
 * orders as they are now, so that a screen explains it as it stands.
 */
export const MatcherCommand = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('order.reverse'),
    ...commandScope,
    order_id: OrderId,
    ...decider,
    reason: z.string().trim().min(1).max(REVERSAL_REASON_MAX).optional(),
    ...audited,
  }),
  z.object({
    type: z.literal('order.mark_paid'),
    ...commandScope,
    order_id: OrderId,
    paid_at: Timestamp.optional(),
    decided_by: decider.decided_by,
    /** `api` or `dashboard` for a person; `shop` when a shop platform reports the payment. */
    trigger: z.enum(['api', 'dashboard', 'shop']),
    ...audited,
  }),
  z.object({
    type: z.literal('transaction.match'),
    ...commandScope,
    transaction_id: TransactionId,
    order_id: OrderId,
    ...decider,
    /** Remember the depositor name as a payer of the order's payer name (rule `learned_payer`). */
    remember_payer: z.boolean().default(false),
    ...audited,
  }),
  z.object({ type: z.literal('transaction.exclude'), ...commandScope, transaction_id: TransactionId, ...decider, ...audited }),
  z.object({ type: z.literal('transaction.restore'), ...commandScope, transaction_id: TransactionId, ...decider, ...audited }),
  z.object({ type: z.literal('rules.preview'), ...commandScope, matching_rules: RuleSet }),
  z.object({ type: z.literal('deposit.explain'), ...commandScope, transaction_id: TransactionId }),
  z.object({
    type: z.literal('rules.confirm_previewed'),
    ...commandScope,
    matching_rules: RuleSet,
    confirmations: z.array(z.object({ transaction_id: TransactionId, order_id: OrderId })).max(RULE_PREVIEW_MAX),
    ...decider,
    ...audited,
  }),
]);
export type MatcherCommand = z.infer<typeof MatcherCommand>;
export type MatcherCommandInput = z.input<typeof MatcherCommand>;

/** A held deposit that a rule set would confirm, and for which order and fit. */
export const PreviewedConfirmation = z.object({ transaction_id: TransactionId, order_id: OrderId, reason: z.string() });
export type PreviewedConfirmation = z.infer<typeof PreviewedConfirmation>;

/** The reply to `rules.preview`: the held deposits examined, and those the rules would confirm. */
export const RulePreviewReply = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    held_examined: z.int(),
    /** True when more held deposits exist than one preview examines. */
    held_left_out: z.boolean(),
    confirmations: z.array(PreviewedConfirmation),
  }),
  z.object({ ok: z.literal(false), error: WireError }),
]);
export type RulePreviewReply = z.infer<typeof RulePreviewReply>;

/**
 * The reply to `deposit.explain`: what deciding the deposit now would give (`outcome`, and the
 * order for `confirmed`) under `matching_rules`, the seller's rules now, and its explanation, which
 * also lists open orders of the amount placed after the deposit (`ordered_after_deposit`). A
 * deposit no longer held or unmatched is refused (`transaction_not_matchable`).
 */
export const DepositExplanationReply = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    outcome: z.enum(['confirmed', 'held', 'unmatched']),
    order_id: OrderId.nullable(),
    matching_rules: RuleSet,
    decision: Decision,
  }),
  z.object({ ok: z.literal(false), error: WireError }),
]);
export type DepositExplanationReply = z.infer<typeof DepositExplanationReply>;
export type DepositExplanation = Omit<Extract<DepositExplanationReply, { ok: true }>, 'ok'>;

/** The reply to `rules.confirm_previewed`: the pairs confirmed, and those left as they were. */
export const PreviewConfirmedReply = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    confirmed: z.array(PreviewedConfirmation),
    left_held: z.array(z.object({ transaction_id: TransactionId, order_id: OrderId })),
  }),
  z.object({ ok: z.literal(false), error: WireError }),
]);
export type PreviewConfirmedReply = z.infer<typeof PreviewConfirmedReply>;

/** The reply to a request that ends in an order's state (reverse, mark-paid). */
export const OrderReply = z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), order: Order }), z.object({ ok: z.literal(false), error: WireError })]);
export type OrderReply = z.infer<typeof OrderReply>;

/** The reply to a request that ends in a transaction's state (test deposit, match operation). */
export const TransactionReply = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), transaction: Transaction }),
  z.object({ ok: z.literal(false), error: WireError }),
]);
export type TransactionReply = z.infer<typeof TransactionReply>;
