import { BankAccount, CreateTestDepositRequest, ListQuery, Transaction, listOf } from '../api';
import { EventListQuery, RecordedEvent } from '../events';
import { Settings, UpdateSettingsRequest } from '../settings';
import { exampleBankAccount, exampleEvents, exampleSettings, exampleTransaction } from './examples';
import { document } from './operations';

document({
  method: 'get',
  path: '/v1/events',
  operationId: 'listEvents',
  tag: 'Events',
  summary: 'List events',
  description:
    "Every event of the key's mode in the order it was recorded, oldest first, kept 30 days. Filter by `type`. " +
    'Page with `starting_after` set to the last event you have: a merchant that missed webhooks catches up this way.',
  query: EventListQuery,
  responses: {
    200: {
      description: 'A page of events.',
      schema: listOf(RecordedEvent).openapi('EventList'),
      example: { object: 'list', data: [exampleEvents['order.created'], exampleEvents['order.paid']], has_more: true },
    },
  },
});

document({
  method: 'get',
  path: '/v1/bank-accounts',
  operationId: 'listBankAccounts',
  tag: 'Bank accounts',
  summary: 'List bank accounts',
  description: "The bank accounts in the key's scope. Account numbers show only their last four digits.",
  query: ListQuery,
  responses: {
    200: {
      description: 'A page of bank accounts.',
      schema: listOf(BankAccount).openapi('BankAccountList'),
      example: { object: 'list', data: [exampleBankAccount], has_more: false },
    },
  },
});

document({
  method: 'get',
  path: '/v1/settings',
  operationId: 'retrieveSettings',
  tag: 'Settings',
  summary: 'Retrieve the settings',
  description: "The matching settings of the key's mode.",
  responses: { 200: { description: 'The settings.', schema: Settings, example: exampleSettings } },
});

document({
  method: 'patch',
  path: '/v1/settings',
  operationId: 'updateSettings',
  tag: 'Settings',
  summary: 'Change the settings',
  description:
    '`matching_rules` lets a payer name match in forms banks print it (half-width kana, company abbreviations, decorations, ' +
    'truncation), tried in catalogue order. `auto_confirm_late_orders` confirms a deposit that arrived before its order was ' +
    'registered instead of holding it.',
  request: { schema: UpdateSettingsRequest, example: { matching_rules: ['kana_width', 'corporate_abbreviation'] } },
  responses: {
    200: {
      description: 'The changed settings.',
      schema: Settings,
      example: { ...exampleSettings, matching_rules: ['kana_width', 'corporate_abbreviation'] },
    },
  },
});

document({
  method: 'post',
  path: '/v1/test/deposits',
  operationId: 'createTestDeposit',
  tag: 'Test mode',
  summary: 'Make a test deposit',
  description:
    'Test keys only (a live key gets 404). The deposit takes the path a bank notification takes: it is stored, matched, ' +
    'its events recorded and webhooks sent; the answer is the transaction with its decision. `occurred_at` (not in the ' +
    'future, default now) lets late orders be tried.',
  request: { schema: CreateTestDepositRequest, example: { amount: 5000, counterparty: 'ヤマダ タロウ' } },
  responses: { 201: { description: 'The deposit, decided.', schema: Transaction, example: exampleTransaction } },
  errors: ['resource_missing'],
});
