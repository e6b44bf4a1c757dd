import { CreateOrderRequest, MarkPaidRequest, Order, OrderId, OrderListQuery, UpdateOrderRequest, listOf } from '../api';
import { exampleCreateOrder, exampleOrder, examplePaidOrder } from './examples';
import { document } from './operations';

const OrderList = listOf(Order).openapi('OrderList');
const orderId = OrderId.openapi({ description: 'The order (`ord_…`).' });
const tag = 'Orders';

document({
  method: 'post',
  path: '/v1/orders',
  operationId: 'createOrder',
  tag,
  summary: 'Register an order',
  description:
    'Registers what a buyer is to pay and answers with the order, whose `payment_url` is the page to send the buyer to. ' +
    '`bank_account_id` may be left out when the key has exactly one bank account in scope (dedicated accounts not counted). ' +
    'With `dedicated_account: true` the order gets a free dedicated transfer account (振込専用口座) as its `bank_account_id`, or, ' +
    "with a `customer_reference` the seller used before, that buyer's; `409 no_dedicated_account_free` when none is free, and " +
    'nothing is stored. `transfer_to` says where the buyer pays. ' +
    'An `external_id` already used with the same content answers the existing order with 200; with other content, ' +
    '`409 external_id_conflict`. Send an `Idempotency-Key` so a retry after a lost answer is safe. Records `order.created`.',
  idempotencyKey: true,
  request: { schema: CreateOrderRequest, example: exampleCreateOrder },
  responses: {
    201: { description: 'The new order.', schema: Order, example: exampleOrder },
    200: { description: 'The order already registered with this `external_id` and the same content.', schema: Order, example: exampleOrder },
  },
  errors: ['ordered_at_in_future', 'external_id_conflict', 'no_dedicated_account_free', 'idempotency_key_reused', 'idempotency_key_in_use'],
});

document({
  method: 'get',
  path: '/v1/orders',
  operationId: 'listOrders',
  tag,
  summary: 'List orders',
  description: "Orders of the key's mode and bank accounts, newest first. Filter by `status` or find one by `external_id`.",
  query: OrderListQuery,
  responses: { 200: { description: 'A page of orders.', schema: OrderList, example: { object: 'list', data: [exampleOrder], has_more: false } } },
});

document({
  method: 'get',
  path: '/v1/orders/{id}',
  operationId: 'retrieveOrder',
  tag,
  summary: 'Retrieve an order',
  description: 'The order as it is now, with its `payment` once paid. Read it again whenever a webhook tells you it changed.',
  pathId: orderId,
  responses: { 200: { description: 'The order.', schema: Order, example: examplePaidOrder } },
});

document({
  method: 'patch',
  path: '/v1/orders/{id}',
  operationId: 'updateOrder',
  tag,
  summary: 'Change an open order',
  description:
    'Changes `amount`, `payer_name` or `metadata` (replaced whole) of an open order, e.g. when the buyer changes the basket. ' +
    'An order that is not open, or one managed by a shop platform, is `409 order_not_open`. Records `order.updated`.',
  pathId: orderId,
  request: { schema: UpdateOrderRequest, example: { amount: 5500 } },
  responses: { 200: { description: 'The changed order.', schema: Order, example: { ...exampleOrder, amount: 5500 } } },
  errors: ['order_not_open'],
});

document({
  method: 'post',
  path: '/v1/orders/{id}/cancel',
  operationId: 'cancelOrder',
  tag,
  summary: 'Cancel an order',
  description: 'Cancels an open or expired order: a later deposit for it is no longer matched to it. Records `order.canceled`.',
  pathId: orderId,
  responses: {
    200: { description: 'The canceled order.', schema: Order, example: { ...exampleOrder, status: 'canceled', closed_at: '2026-11-24T06:00:00.000Z' } },
  },
  errors: ['order_not_open'],
});

document({
  method: 'post',
  path: '/v1/orders/{id}/reverse',
  operationId: 'reverseOrderPayment',
  tag,
  summary: 'Reverse a payment',
  description:
    'Undoes the match of a paid order within 24 hours of it (later: `409 reverse_window_passed`): the order is open again and ' +
    'the deposit unmatched. Records `order.payment_reversed` with the previous payment.',
  pathId: orderId,
  responses: { 200: { description: 'The order, open again.', schema: Order, example: exampleOrder } },
  errors: ['order_not_open', 'reverse_window_passed'],
});

document({
  method: 'post',
  path: '/v1/orders/{id}/mark-paid',
  operationId: 'markOrderPaid',
  tag,
  summary: 'Mark an order paid outside the account',
  description:
    'For an open order the buyer paid some other way: its status becomes `paid_outside`. `paid_at` defaults to now and ' +
    'must not be in the future. Records `order.paid`.',
  pathId: orderId,
  request: { schema: MarkPaidRequest, example: { paid_at: '2026-11-24T04:00:00.000Z' } },
  responses: {
    200: {
      description: 'The order, paid outside.',
      schema: Order,
      example: {
        ...exampleOrder,
        status: 'paid_outside',
        closed_at: '2026-11-24T04:00:00.000Z',
        payment: {
          transaction_id: null,
          amount: 5000,
          counterparty: 'ヤマダ タロウ',
          occurred_at: '2026-11-24T04:00:00.000Z',
          matched_at: '2026-11-24T04:00:00.000Z',
          decided_by: 'api',
          trigger: 'mark_paid',
          reason: 'manual',
        },
      },
    },
  },
  errors: ['order_not_open'],
});
