import { listOf } from '../api';
import { DeletedPayerAlias, PayerAlias, PayerAliasId, PayerAliasListQuery } from '../payer-aliases';
import { examplePayerAlias } from './examples';
import { document } from './operations';

const PayerAliasList = listOf(PayerAlias).openapi('PayerAliasList');
const payerAliasId = PayerAliasId.openapi({ description: 'The payer alias (`pal_…`).' });
const tag = 'Payer aliases';

document({
  method: 'get',
  path: '/v1/payer-aliases',
  operationId: 'listPayerAliases',
  tag,
  summary: 'List remembered payers',
  description:
    'The depositor names people taught the service, newest first: each was remembered when a person matched a deposit under it ' +
    'to an order with `remember_payer`. With the `learned_payer` rule on, a later deposit under that name pays an open order of ' +
    "that payer name and the deposit's amount on the same bank account, when no other order fits.",
  query: PayerAliasListQuery,
  responses: {
    200: { description: 'A page of remembered payers.', schema: PayerAliasList, example: { object: 'list', data: [examplePayerAlias], has_more: false } },
  },
});

document({
  method: 'delete',
  path: '/v1/payer-aliases/{id}',
  operationId: 'deletePayerAlias',
  tag,
  summary: 'Forget a remembered payer',
  description: 'Deposits under the name are decided without it from now on. Payments it made stay as they are.',
  pathId: payerAliasId,
  responses: {
    200: { description: 'The payer alias, deleted.', schema: DeletedPayerAlias, example: { id: examplePayerAlias.id, object: 'payer_alias', deleted: true } },
  },
});
