import type { components, operations, paths, webhooks } from './generated/api';

type Schemas = components['schemas'];

export type Order = Schemas['Order'];
export type Payment = Schemas['Payment'];
export type PaymentLink = Schemas['PaymentLink'];
export type Transaction = Schemas['Transaction'];
export type Decision = Schemas['Decision'];
export type BankAccount = Schemas['BankAccount'];
export type Settings = Schemas['Settings'];
export type Event = Schemas['Event'];
export type EventType = Event['type'];
/** The event of one type: `EventOf<'order.paid'>`. */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;
/** An event as `GET /v1/events` lists it: any but a `webhook.test`, which is sent on request and never recorded. */
export type RecordedEvent = Schemas['RecordedEvent'];
export type RecordedEventType = RecordedEvent['type'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
/** The answer that created an endpoint: the endpoint with its signing secret. */
export type CreatedWebhookEndpoint = Schemas['CreatedWebhookEndpoint'];
export type WebhookEndpointSecret = Schemas['WebhookEndpointSecret'];
export type WebhookDeliveryAttempt = Schemas['WebhookDeliveryAttempt'];
export type DeletedWebhookEndpoint = Schemas['DeletedWebhookEndpoint'];
export type ResendAccepted = Schemas['ResendAccepted'];

export type CreateOrderRequest = Schemas['CreateOrderRequest'];
export type UpdateOrderRequest = Schemas['UpdateOrderRequest'];
export type MarkPaidRequest = Schemas['MarkPaidRequest'];
export type CreatePaymentLinkRequest = Schemas['CreatePaymentLinkRequest'];
export type UpdateSettingsRequest = Schemas['UpdateSettingsRequest'];
export type CreateTestDepositRequest = Schemas['CreateTestDepositRequest'];
export type CreateWebhookEndpointRequest = Schemas['CreateWebhookEndpointRequest'];
export type UpdateWebhookEndpointRequest = Schemas['UpdateWebhookEndpointRequest'];

type QueryOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
export type ListQuery = QueryOf<'/v1/bank-accounts', 'get'>;
export type OrderListQuery = QueryOf<'/v1/orders', 'get'>;
export type TransactionListQuery = QueryOf<'/v1/transactions', 'get'>;
export type EventListQuery = QueryOf<'/v1/events', 'get'>;
export type DeliveryAttemptListQuery = QueryOf<'/v1/webhook-endpoints/{id}/deliveries', 'get'>;

/** The OpenAPI operationId of each operation: `createOrder`, `listEvents`, … */
export type OperationId = keyof operations;

type ResponseBodies<Responses> = {
  [Status in keyof Responses]: Responses[Status] extends { content: { 'application/json': infer Body } } ? Body : never;
}[keyof Responses];
type CodeOf<Body> = Body extends { error: { code: infer Code } } ? Code : never;

/** The error codes the OpenAPI document lists for an operation: `ErrorCodeOf<'createOrder'>`. */
export type ErrorCodeOf<Op extends OperationId> = Extract<CodeOf<ResponseBodies<operations[Op]['responses']>>, Schemas['Error']['error']['code']>;

/** One page of a list: ask for the next with `starting_after` set to the last id while `has_more`. */
export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

export type { components, operations, paths, webhooks };
