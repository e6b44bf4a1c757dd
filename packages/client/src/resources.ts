import type { Client } from 'openapi-fetch';
import { answerOf, type RequestOptions, type Transport, type WithResponse } from './request';
import type {
  BankAccount,
  CreatedWebhookEndpoint,
  CreateOrderRequest,
  CreatePaymentLinkRequest,
  CreateTestDepositRequest,
  CreateWebhookEndpointRequest,
  DeletedWebhookEndpoint,
  DeliveryAttemptListQuery,
  Event,
  EventListQuery,
  EventOf,
  List,
  ListQuery,
  MarkPaidRequest,
  Order,
  OrderListQuery,
  PaymentLink,
  RecordedEventType,
  ResendAccepted,
  Settings,
  Transaction,
  TransactionListQuery,
  UpdateOrderRequest,
  UpdateSettingsRequest,
  UpdateWebhookEndpointRequest,
  WebhookDeliveryAttempt,
  WebhookEndpoint,
  WebhookEndpointSecret,
  paths,
} from './types';

type Api = Client<paths>;
type Answered<T> = Promise<WithResponse<T>>;

/** Every object of a list, page after page, each page asked for when the one before is used up. */
export async function* everyPage<T extends { id: string }>(page: (startingAfter: string | undefined) => Promise<List<T>>): AsyncGenerator<T> {
  let startingAfter: string | undefined;
  for (;;) {
    const list = await page(startingAfter);
    yield* list.data;
    const last = list.data.at(-1);
    if (!list.has_more || last === undefined) return;
    startingAfter = last.id;
  }
}

/** What every resource holds: the typed openapi-fetch client and how its calls are sent. */
abstract class Resource {
  constructor(
    protected readonly api: Api,
    protected readonly transport: Transport,
  ) {}
}

const newIdempotencyKey = () => globalThis.crypto.randomUUID();

/**
 * Each method is one operation (named by its OpenAPI operationId in its ApiError) and takes, last,
 * `RequestOptions`: a timeout, an AbortSignal, retries. Each answers the object with its
 * `lastResponse` (status, request id, whether replayed).
 */
export class Orders extends Resource {
  /**
   * Registers an order (`createOrder`). Sends an Idempotency-Key (a new one unless given), so the
   * retries of this call never create a second order; pass your own to make retries across
   * restarts safe too. `lastResponse.statusCode` is 201 for a new order and 200 for the one
   * already registered with this `external_id` and the same content.
   */
  create(body: CreateOrderRequest, options: RequestOptions & { idempotencyKey?: string } = {}): Answered<Order> {
    const key = options.idempotencyKey ?? newIdempotencyKey();
    const call = this.api.POST('/v1/orders', { body, params: { header: { 'Idempotency-Key': key } }, ...this.transport.init(options) });
    return answerOf('createOrder', call, key);
  }

  retrieve(id: string, options: RequestOptions = {}): Answered<Order> {
    return answerOf('retrieveOrder', this.api.GET('/v1/orders/{id}', { params: { path: { id } }, ...this.transport.init(options) }));
  }

  update(id: string, body: UpdateOrderRequest, options: RequestOptions = {}): Answered<Order> {
    return answerOf('updateOrder', this.api.PATCH('/v1/orders/{id}', { params: { path: { id } }, body, ...this.transport.init(options) }));
  }

  cancel(id: string, options: RequestOptions = {}): Answered<Order> {
    return answerOf('cancelOrder', this.api.POST('/v1/orders/{id}/cancel', { params: { path: { id } }, ...this.transport.init(options) }));
  }

  reversePayment(id: string, options: RequestOptions = {}): Answered<Order> {
    return answerOf('reverseOrderPayment', this.api.POST('/v1/orders/{id}/reverse', { params: { path: { id } }, ...this.transport.init(options) }));
  }

  markPaid(id: string, body: MarkPaidRequest = {}, options: RequestOptions = {}): Answered<Order> {
    return answerOf('markOrderPaid', this.api.POST('/v1/orders/{id}/mark-paid', { params: { path: { id } }, body, ...this.transport.init(options) }));
  }

  /** One page, newest first. */
  list(query: OrderListQuery = {}, options: RequestOptions = {}): Answered<List<Order>> {
    return answerOf('listOrders', this.api.GET('/v1/orders', { params: { query }, ...this.transport.init(options) }));
  }

  /** Every order the query finds, across pages. */
  listAll(query: Omit<OrderListQuery, 'starting_after'> = {}, options: RequestOptions = {}): AsyncGenerator<Order> {
    return everyPage((after) => this.list(after === undefined ? query : { ...query, starting_after: after }, options));
  }
}

export class PaymentLinks extends Resource {
  /** A link buyers order at; its `url` is the page to share. Not retried on a lost answer: list to find it. */
  create(body: CreatePaymentLinkRequest, options: RequestOptions = {}): Answered<PaymentLink> {
    return answerOf('createPaymentLink', this.api.POST('/v1/payment-links', { body, ...this.transport.init(options) }));
  }

  retrieve(id: string, options: RequestOptions = {}): Answered<PaymentLink> {
    return answerOf('retrievePaymentLink', this.api.GET('/v1/payment-links/{id}', { params: { path: { id } }, ...this.transport.init(options) }));
  }

  /** Stops the link taking orders; orders made at it stay as they are. */
  deactivate(id: string, options: RequestOptions = {}): Answered<PaymentLink> {
    const call = this.api.POST('/v1/payment-links/{id}/deactivate', { params: { path: { id } }, ...this.transport.init(options) });
    return answerOf('deactivatePaymentLink', call);
  }

  /** One page, newest first. */
  list(query: ListQuery = {}, options: RequestOptions = {}): Answered<List<PaymentLink>> {
    return answerOf('listPaymentLinks', this.api.GET('/v1/payment-links', { params: { query }, ...this.transport.init(options) }));
  }

  listAll(options: RequestOptions = {}): AsyncGenerator<PaymentLink> {
    return everyPage((after) => this.list(after === undefined ? {} : { starting_after: after }, options));
  }
}

export class Transactions extends Resource {
  retrieve(id: string, options: RequestOptions = {}): Answered<Transaction> {
    return answerOf('retrieveTransaction', this.api.GET('/v1/transactions/{id}', { params: { path: { id } }, ...this.transport.init(options) }));
  }

  /** Confirms a held or unmatched deposit for an order. */
  match(id: string, orderId: string, options: RequestOptions = {}): Answered<Transaction> {
    const call = this.api.POST('/v1/transactions/{id}/match', { params: { path: { id } }, body: { order_id: orderId }, ...this.transport.init(options) });
    return answerOf('matchTransaction', call);
  }

  exclude(id: string, options: RequestOptions = {}): Answered<Transaction> {
    return answerOf('excludeTransaction', this.api.POST('/v1/transactions/{id}/exclude', { params: { path: { id } }, ...this.transport.init(options) }));
  }

  restore(id: string, options: RequestOptions = {}): Answered<Transaction> {
    return answerOf('restoreTransaction', this.api.POST('/v1/transactions/{id}/restore', { params: { path: { id } }, ...this.transport.init(options) }));
  }

  list(query: TransactionListQuery = {}, options: RequestOptions = {}): Answered<List<Transaction>> {
    return answerOf('listTransactions', this.api.GET('/v1/transactions', { params: { query }, ...this.transport.init(options) }));
  }

  listAll(query: Omit<TransactionListQuery, 'starting_after'> = {}, options: RequestOptions = {}): AsyncGenerator<Transaction> {
    return everyPage((after) => this.list(after === undefined ? query : { ...query, starting_after: after }, options));
  }
}

/** A query of GET /v1/events whose `type`, when given, narrows what it answers to that type's events. */
export type EventQuery<T extends RecordedEventType> = Omit<EventListQuery, 'type'> & { type?: T };

export class Events extends Resource {
  /** One page, in recorded order (oldest first); `type` narrows the events' type. */
  list<T extends RecordedEventType = RecordedEventType>(query: EventQuery<T> = {}, options: RequestOptions = {}): Answered<List<EventOf<T>>> {
    return answerOf('listEvents', this.api.GET('/v1/events', { params: { query }, ...this.transport.init(options) })) as Answered<List<EventOf<T>>>;
  }

  /**
   * Every event after `starting_after` (or all 30 days of them), in recorded order: how to catch
   * up on missed webhooks. `listAll({ type: 'order.paid' })` yields `EventOf<'order.paid'>`.
   */
  listAll<T extends RecordedEventType = RecordedEventType>(query: EventQuery<T> = {}, options: RequestOptions = {}): AsyncGenerator<EventOf<T>> {
    return everyPage((after) => this.list<T>(after === undefined ? query : { ...query, starting_after: after }, options));
  }
}

export class BankAccounts extends Resource {
  list(query: ListQuery = {}, options: RequestOptions = {}): Answered<List<BankAccount>> {
    return answerOf('listBankAccounts', this.api.GET('/v1/bank-accounts', { params: { query }, ...this.transport.init(options) }));
  }

  listAll(options: RequestOptions = {}): AsyncGenerator<BankAccount> {
    return everyPage((after) => this.list(after === undefined ? {} : { starting_after: after }, options));
  }
}

export class SettingsResource extends Resource {
  retrieve(options: RequestOptions = {}): Answered<Settings> {
    return answerOf('retrieveSettings', this.api.GET('/v1/settings', this.transport.init(options)));
  }

  update(body: UpdateSettingsRequest, options: RequestOptions = {}): Answered<Settings> {
    return answerOf('updateSettings', this.api.PATCH('/v1/settings', { body, ...this.transport.init(options) }));
  }
}

export class TestDeposits extends Resource {
  /** Test keys only: a deposit decided as a bank's would be; the answer carries the decision. */
  create(body: CreateTestDepositRequest, options: RequestOptions = {}): Answered<Transaction> {
    return answerOf('createTestDeposit', this.api.POST('/v1/test/deposits', { body, ...this.transport.init(options) }));
  }
}

export class WebhookEndpoints extends Resource {
  /** The answer holds the signing secret (`secret`, `whsec_…`): keep it to verify deliveries. */
  create(body: CreateWebhookEndpointRequest, options: RequestOptions = {}): Answered<CreatedWebhookEndpoint> {
    return answerOf('createWebhookEndpoint', this.api.POST('/v1/webhook-endpoints', { body, ...this.transport.init(options) }));
  }

  retrieve(id: string, options: RequestOptions = {}): Answered<WebhookEndpoint> {
    const call = this.api.GET('/v1/webhook-endpoints/{id}', { params: { path: { id } }, ...this.transport.init(options) });
    return answerOf('retrieveWebhookEndpoint', call);
  }

  update(id: string, body: UpdateWebhookEndpointRequest, options: RequestOptions = {}): Answered<WebhookEndpoint> {
    const call = this.api.PATCH('/v1/webhook-endpoints/{id}', { params: { path: { id } }, body, ...this.transport.init(options) });
    return answerOf('updateWebhookEndpoint', call);
  }

  delete(id: string, options: RequestOptions = {}): Answered<DeletedWebhookEndpoint> {
    const call = this.api.DELETE('/v1/webhook-endpoints/{id}', { params: { path: { id } }, ...this.transport.init(options) });
    return answerOf('deleteWebhookEndpoint', call);
  }

  list(query: ListQuery = {}, options: RequestOptions = {}): Answered<List<WebhookEndpoint>> {
    return answerOf('listWebhookEndpoints', this.api.GET('/v1/webhook-endpoints', { params: { query }, ...this.transport.init(options) }));
  }

  retrieveSecret(id: string, options: RequestOptions = {}): Answered<WebhookEndpointSecret> {
    const call = this.api.GET('/v1/webhook-endpoints/{id}/secret', { params: { path: { id } }, ...this.transport.init(options) });
    return answerOf('retrieveWebhookEndpointSecret', call);
  }

  rotateSecret(id: string, options: RequestOptions = {}): Answered<WebhookEndpointSecret> {
    const call = this.api.POST('/v1/webhook-endpoints/{id}/rotate-secret', { params: { path: { id } }, ...this.transport.init(options) });
    return answerOf('rotateWebhookEndpointSecret', call);
  }

  sendTestEvent(id: string, options: RequestOptions = {}): Answered<Event> {
    const call = this.api.POST('/v1/webhook-endpoints/{id}/test', { params: { path: { id } }, ...this.transport.init(options) });
    return answerOf('sendTestWebhookEvent', call);
  }

  listDeliveryAttempts(id: string, query: DeliveryAttemptListQuery = {}, options: RequestOptions = {}): Answered<List<WebhookDeliveryAttempt>> {
    const call = this.api.GET('/v1/webhook-endpoints/{id}/deliveries', { params: { path: { id }, query }, ...this.transport.init(options) });
    return answerOf('listWebhookDeliveryAttempts', call);
  }

  /** One more attempt of the event to this endpoint, due now (`lastResponse.statusCode` 202). */
  resend(id: string, eventId: string, options: RequestOptions = {}): Answered<ResendAccepted> {
    const call = this.api.POST('/v1/webhook-endpoints/{id}/deliveries/resend', {
      params: { path: { id } },
      body: { event_id: eventId },
      ...this.transport.init(options),
    });
    return answerOf('resendWebhookEvent', call);
  }
}
