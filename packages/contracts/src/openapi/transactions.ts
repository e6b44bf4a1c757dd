import { MatchTransactionRequest, Transaction, TransactionId, TransactionListQuery, listOf } from '../api';
import { EXAMPLE_IDS, exampleHeldTransaction, exampleTransaction } from './examples';
import { document } from './operations';

const TransactionList = listOf(Transaction).openapi('TransactionList');
const transactionId = TransactionId.openapi({ description: 'The transaction (`txn_…`).' });
const tag = 'Transactions';
const manual = { reason: 'manual', candidates: [] };

document({
  method: 'get',
  path: '/v1/transactions',
  operationId: 'listTransactions',
  tag,
  summary: 'List transactions',
  description: "Deposits and withdrawals of the key's mode and bank accounts, newest first. `status=held` lists the deposits waiting for a person.",
  query: TransactionListQuery,
  responses: {
    200: { description: 'A page of transactions.', schema: TransactionList, example: { object: 'list', data: [exampleHeldTransaction], has_more: false } },
  },
});

document({
  method: 'get',
  path: '/v1/transactions/{id}',
  operationId: 'retrieveTransaction',
  tag,
  summary: 'Retrieve a transaction',
  description: 'The transaction with its `decision`: why it was confirmed, held or left unmatched, and how each order with its amount fitted.',
  pathId: transactionId,
  responses: { 200: { description: 'The transaction.', schema: Transaction, example: exampleTransaction } },
});

document({
  method: 'post',
  path: '/v1/transactions/{id}/match',
  operationId: 'matchTransaction',
  tag,
  summary: 'Match a deposit to an order',
  description:
    'Confirms a held or unmatched deposit for an order of the same bank account and amount, placed before the deposit ' +
    '(else `409 transaction_not_matchable`). An order already paid is `409 order_taken`. Records `order.paid`.',
  pathId: transactionId,
  request: { schema: MatchTransactionRequest, example: { order_id: EXAMPLE_IDS.order } },
  responses: {
    200: {
      description: 'The deposit, confirmed for the order.',
      schema: Transaction,
      example: { ...exampleTransaction, candidate_order_ids: [], decision: manual },
    },
  },
  errors: ['transaction_not_matchable', 'order_taken', 'order_not_open'],
});

document({
  method: 'post',
  path: '/v1/transactions/{id}/exclude',
  operationId: 'excludeTransaction',
  tag,
  summary: 'Exclude a deposit',
  description:
    'Takes out a held or unmatched deposit that is not for the merchant (a refund, a transfer from the owner): it is never ' +
    'matched. Refused with `409 open_order_with_same_amount` while an open order has its amount.',
  pathId: transactionId,
  responses: {
    200: {
      description: 'The excluded deposit.',
      schema: Transaction,
      example: { ...exampleTransaction, status: 'excluded', order_id: null, decision: { reason: 'excluded', candidates: [] } },
    },
  },
  errors: ['transaction_not_excludable', 'open_order_with_same_amount'],
});

document({
  method: 'post',
  path: '/v1/transactions/{id}/restore',
  operationId: 'restoreTransaction',
  tag,
  summary: 'Restore an excluded deposit',
  description: 'Brings an excluded deposit back as `unmatched`, so it can be matched again.',
  pathId: transactionId,
  responses: {
    200: {
      description: 'The deposit, unmatched again.',
      schema: Transaction,
      example: { ...exampleTransaction, status: 'unmatched', order_id: null, decision: { reason: 'restored', candidates: [] } },
    },
  },
  errors: ['transaction_not_excluded'],
});
