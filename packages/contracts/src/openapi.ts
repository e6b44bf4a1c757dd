import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from './zod';
import {
  BankAccount,
  CreateOrderRequest,
  CreateTestDepositRequest,
  MarkPaidRequest,
  MatchTransactionRequest,
  Order,
  ListQuery,
  OrderListQuery,
  TransactionListQuery,
  Transaction,
  UpdateOrderRequest,
  listOf,
} from './api';
import { ErrorBody } from './errors';
import { Event, EventListQuery } from './events';
import { Settings, UpdateSettingsRequest } from './settings';

type Method = 'get' | 'post' | 'patch' | 'delete';

interface Operation {
  method: Method;
  path: string;
  summary: string;
  request?: z.ZodType;
  query?: z.ZodObject;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

/** The /v1 operations; paths use OpenAPI templates ({id}). Adding an endpoint means adding it here. */
export const OPERATIONS: Operation[] = [];

export function document(operation: Operation): void {
  OPERATIONS.push(operation);
}

const IdParam = z.object({ id: z.string() });

const ok = (schema: z.ZodType, description = 'OK') => ({ 200: { description, schema } });

document({ method: 'post', path: '/v1/orders', summary: 'Register an order', request: CreateOrderRequest, responses: {
  201: { description: 'Created', schema: Order },
  200: { description: 'The order already registered with this external_id and the same content', schema: Order },
} });
document({ method: 'get', path: '/v1/orders', summary: 'List orders, newest first', query: OrderListQuery, responses: ok(listOf(Order)) });
document({ method: 'get', path: '/v1/orders/{id}', summary: 'Retrieve an order', responses: ok(Order) });
document({ method: 'patch', path: '/v1/orders/{id}', summary: 'Change amount, payer_name or metadata of an open order', request: UpdateOrderRequest, responses: ok(Order) });
document({ method: 'post', path: '/v1/orders/{id}/cancel', summary: 'Cancel an open or expired order', responses: ok(Order) });
document({ method: 'post', path: '/v1/orders/{id}/reverse', summary: 'Reverse a payment within 24 hours', responses: ok(Order) });
document({ method: 'post', path: '/v1/orders/{id}/mark-paid', summary: 'Mark an open order paid outside the account', request: MarkPaidRequest, responses: ok(Order) });
document({ method: 'get', path: '/v1/transactions', summary: 'List transactions, newest first', query: TransactionListQuery, responses: ok(listOf(Transaction)) });
document({ method: 'get', path: '/v1/transactions/{id}', summary: 'Retrieve a transaction', responses: ok(Transaction) });
document({ method: 'post', path: '/v1/transactions/{id}/match', summary: 'Confirm a held or unmatched deposit for an order', request: MatchTransactionRequest, responses: ok(Transaction) });
document({ method: 'post', path: '/v1/transactions/{id}/exclude', summary: 'Take out a deposit that is not the merchant\'s', responses: ok(Transaction) });
document({ method: 'post', path: '/v1/transactions/{id}/restore', summary: 'Bring back an excluded deposit', responses: ok(Transaction) });
document({ method: 'get', path: '/v1/events', summary: 'List events in recorded order (kept 30 days)', query: EventListQuery, responses: ok(listOf(Event)) });
document({ method: 'get', path: '/v1/bank-accounts', summary: 'List the bank accounts in the key\'s scope', query: ListQuery, responses: ok(listOf(BankAccount)) });
document({ method: 'get', path: '/v1/settings', summary: 'Read the settings of the key\'s mode', responses: ok(Settings) });
document({ method: 'patch', path: '/v1/settings', summary: 'Change late-order auto-confirmation and matching rules', request: UpdateSettingsRequest, responses: ok(Settings) });
document({ method: 'post', path: '/v1/test/deposits', summary: 'Make a test deposit (test keys only); answers with the decision', request: CreateTestDepositRequest, responses: {
  201: { description: 'Stored and decided', schema: Transaction },
} });

/** The OpenAPI 3.1 document of the /v1 API, generated from the same schemas the services parse with. */
export function buildOpenApiDocument(serverUrl: string): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.register('Order', Order);
  registry.register('Transaction', Transaction);
  registry.register('Event', Event);
  registry.register('BankAccount', BankAccount);
  registry.register('Settings', Settings);
  registry.register('Error', ErrorBody);
  const bearer = registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'svc_test_… or svc_live_…; server-side only',
  });
  for (const op of OPERATIONS) {
    const responses: Record<string, object> = {};
    for (const [status, response] of Object.entries(op.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema ? { content: { 'application/json': { schema: response.schema } } } : {}),
      };
    }
    responses.default = { description: 'Error', content: { 'application/json': { schema: ErrorBody } } };
    registry.registerPath({
      method: op.method,
      path: op.path,
      summary: op.summary,
      security: [{ [bearer.name]: [] }],
      request: {
        ...(op.path.includes('{id}') ? { params: IdParam } : {}),
        ...(op.query ? { query: op.query } : {}),
        ...(op.request ? { body: { content: { 'application/json': { schema: op.request } } } } : {}),
      },
      responses,
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Bank-transfer payment matching API', version: 'v1' },
    servers: [{ url: serverUrl }],
  });
}
