import { CreatePaymentLinkRequest, ListQuery, PaymentLink, PaymentLinkId, listOf } from '../api';
import { examplePaymentLink, exampleCreatePaymentLink } from './examples';
import { document } from './operations';

const PaymentLinkList = listOf(PaymentLink).openapi('PaymentLinkList');
const paymentLinkId = PaymentLinkId.openapi({ description: 'The payment link (`plink_…`).' });
const tag = 'Payment links';

document({
  method: 'post',
  path: '/v1/payment-links',
  operationId: 'createPaymentLink',
  tag,
  summary: 'Create a payment link',
  description:
    'A page for a fixed `amount` and `item_name` that you can share anywhere (a social post, an e-mail, a QR code). ' +
    'A buyer who opens its `url` enters the name they will transfer under, sees it as their bank will print it, and gets an order ' +
    '(`source: payment_link`, recorded as `order.created`) and its payment page. `use_limit` caps the orders it takes, ' +
    '`expires_at` (in the future) ends it; `metadata` is copied to each order. `bank_account_id` may be left out when the key ' +
    'has exactly one bank account in scope. Creating a link records no event.',
  request: { schema: CreatePaymentLinkRequest, example: exampleCreatePaymentLink },
  responses: { 201: { description: 'The new link.', schema: PaymentLink, example: { ...examplePaymentLink, use_count: 0 } } },
});

document({
  method: 'get',
  path: '/v1/payment-links',
  operationId: 'listPaymentLinks',
  tag,
  summary: 'List payment links',
  description: "Payment links of the key's mode and bank accounts, newest first.",
  query: ListQuery,
  responses: {
    200: { description: 'A page of payment links.', schema: PaymentLinkList, example: { object: 'list', data: [examplePaymentLink], has_more: false } },
  },
});

document({
  method: 'get',
  path: '/v1/payment-links/{id}',
  operationId: 'retrievePaymentLink',
  tag,
  summary: 'Retrieve a payment link',
  description: 'The link as it is now: its `status` and how many orders it has taken (`use_count`).',
  pathId: paymentLinkId,
  responses: { 200: { description: 'The payment link.', schema: PaymentLink, example: examplePaymentLink } },
});

document({
  method: 'post',
  path: '/v1/payment-links/{id}/deactivate',
  operationId: 'deactivatePaymentLink',
  tag,
  summary: 'Deactivate a payment link',
  description:
    'Stops the link taking orders: its page tells buyers it can no longer be used. Orders already made at it are unchanged. ' +
    'Deactivating it again answers the link as it is. It cannot be activated again: create a new link instead. Records no event.',
  pathId: paymentLinkId,
  responses: {
    200: {
      description: 'The deactivated link.',
      schema: PaymentLink,
      example: { ...examplePaymentLink, status: 'deactivated', deactivated_at: '2026-11-25T01:00:00.000Z' },
    },
  },
});
