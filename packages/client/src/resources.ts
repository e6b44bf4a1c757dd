import type { Client } from 'openapi-fetch';
import { ApiError } from './errors';
import type {
  BankAccount,
  CreateOrderRequest,
  CreatePaymentLinkRequest,
  CreateTestDepositRequest,
  CreateWebhookEndpointRequest,
  DeliveryAttemptListQuery,
  Event,
  EventListQuery,
  List,
  ListQuery,
  MarkPaidRequest,
  Order,
  OrderListQuery,
  PaymentLink,
  Transaction,
  TransactionListQuery,
  UpdateOrderRequest,
  UpdateSettingsRequest,
  UpdateWebhookEndpointRequest,
  WebhookDeliveryAttempt,
  WebhookEndpoint,
  paths,
} from './types';

type Api = Client<paths>;
type Answer = { data?: unknown; error?: unknown; response: Response };

/** The body of a 2xx answer; any other answer throws its ApiError. */
async function unwrap<A extends Answer>(call: Promise<A>): Promise<NonNullable<A['data']>> {
  const { data, error, response } = await call;
  if (!response.ok) throw ApiError.from(response, error);
  return data as NonNullable<A['data']>;
}

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

const newIdempotencyKey = () => globalThis.crypto.randomUUID();

export class Orders {
  constructor(private readonly api: Api) {}

  /**
   * Registers an order. Sends an Idempotency-Key (a new one unless given), so the retries of this
   * call never create a second order; pass your own to make retries across restarts safe too.
   */
  create(body: CreateOrderRequest, options: { idempotencyKey?: string } = {}): Promise<Order> {
    const key = options.idempotencyKey ?? newIdempotencyKey();
    return unwrap(this.api.POST('/v1/orders', { body, params: { header: { 'Idempotency-Key': key } } }));
  }

  retrieve(id: string): Promise<Order> {
    return unwrap(this.api.GET('/v1/orders/{id}', { params: { path: { id } } }));
  }

  update(id: string, body: UpdateOrderRequest): Promise<Order> {
    return unwrap(this.api.PATCH('/v1/orders/{id}', { params: { path: { id } }, body }));
  }

  cancel(id: string): Promise<Order> {
    return unwrap(this.api.POST('/v1/orders/{id}/cancel', { params: { path: { id } } }));
  }

  reversePayment(id: string): Promise<Order> {
    return unwrap(this.api.POST('/v1/orders/{id}/reverse', { params: { path: { id } } }));
  }

  markPaid(id: string, body: MarkPaidRequest = {}): Promise<Order> {
    return unwrap(this.api.POST('/v1/orders/{id}/mark-paid', { params: { path: { id } }, body }));
  }

  /** One page, newest first. */
  list(query: OrderListQuery = {}): Promise<List<Order>> {
    return unwrap(this.api.GET('/v1/orders', { params: { query } }));
  }

  /** Every order the query finds, across pages. */
  listAll(query: Omit<OrderListQuery, 'starting_after'> = {}): AsyncGenerator<Order> {
    return everyPage((after) => this.list(after === undefined ? query : { ...query, starting_after: after }));
  }
}

export class PaymentLinks {
  constructor(private readonly api: Api) {}

  /** A link buyers order at; its `url` is the page to share. Not retried on a lost answer: list to find it. */
  create(body: CreatePaymentLinkRequest): Promise<PaymentLink> {
    return unwrap(this.api.POST('/v1/payment-links', { body }));
  }

  retrieve(id: string): Promise<PaymentLink> {
    return unwrap(this.api.GET('/v1/payment-links/{id}', { params: { path: { id } } }));
  }

  /** Stops the link taking orders; orders made at it stay as they are. */
  deactivate(id: string): Promise<PaymentLink> {
    return unwrap(this.api.POST('/v1/payment-links/{id}/deactivate', { params: { path: { id } } }));
  }

  /** One page, newest first. */
  list(query: ListQuery = {}): Promise<List<PaymentLink>> {
    return unwrap(this.api.GET('/v1/payment-links', { params: { query } }));
  }

  listAll(): AsyncGenerator<PaymentLink> {
    return everyPage((after) => this.list(after === undefined ? {} : { starting_after: after }));
  }
}

export class Transactions {
  constructor(private readonly api: Api) {}

  retrieve(id: string): Promise<Transaction> {
    return unwrap(this.api.GET('/v1/transactions/{id}', { params: { path: { id } } }));
  }

  /** Confirms a held or unmatched deposit for an order. */
  match(id: string, orderId: string): Promise<Transaction> {
    return unwrap(this.api.POST('/v1/transactions/{id}/match', { params: { path: { id } }, body: { order_id: orderId } }));
  }

  exclude(id: string): Promise<Transaction> {
    return unwrap(this.api.POST('/v1/transactions/{id}/exclude', { params: { path: { id } } }));
  }

  restore(id: string): Promise<Transaction> {
    return unwrap(this.api.POST('/v1/transactions/{id}/restore', { params: { path: { id } } }));
  }

  list(query: TransactionListQuery = {}): Promise<List<Transaction>> {
    return unwrap(this.api.GET('/v1/transactions', { params: { query } }));
  }

  listAll(query: Omit<TransactionListQuery, 'starting_after'> = {}): AsyncGenerator<Transaction> {
    return everyPage((after) => this.list(after === undefined ? query : { ...query, starting_after: after }));
  }
}

export class Events {
  constructor(private readonly api: Api) {}

  /** One page, in recorded order (oldest first). */
  list(query: EventListQuery = {}): Promise<List<Event>> {
    return unwrap(this.api.GET('/v1/events', { params: { query } }));
  }

  /** Every event after `starting_after` (or all 30 days of them), in recorded order: how to catch up on missed webhooks. */
  listAll(query: EventListQuery = {}): AsyncGenerator<Event> {
    return everyPage((after) => this.list(after === undefined ? query : { ...query, starting_after: after }));
  }
}

export class BankAccounts {
  constructor(private readonly api: Api) {}

  list(query: ListQuery = {}): Promise<List<BankAccount>> {
    return unwrap(this.api.GET('/v1/bank-accounts', { params: { query } }));
  }

  listAll(): AsyncGenerator<BankAccount> {
    return everyPage((after) => this.list(after === undefined ? {} : { starting_after: after }));
  }
}

export class SettingsResource {
  constructor(private readonly api: Api) {}

  retrieve() {
    return unwrap(this.api.GET('/v1/settings'));
  }

  update(body: UpdateSettingsRequest) {
    return unwrap(this.api.PATCH('/v1/settings', { body }));
  }
}

export class TestDeposits {
  constructor(private readonly api: Api) {}

  /** Test keys only: a deposit decided as a bank's would be; the answer carries the decision. */
  create(body: CreateTestDepositRequest): Promise<Transaction> {
    return unwrap(this.api.POST('/v1/test/deposits', { body }));
  }
}

export class WebhookEndpoints {
  constructor(private readonly api: Api) {}

  /** The answer holds the signing secret. */
  create(body: CreateWebhookEndpointRequest): Promise<WebhookEndpoint> {
    return unwrap(this.api.POST('/v1/webhook-endpoints', { body }));
  }

  retrieve(id: string): Promise<WebhookEndpoint> {
    return unwrap(this.api.GET('/v1/webhook-endpoints/{id}', { params: { path: { id } } }));
  }

  update(id: string, body: UpdateWebhookEndpointRequest): Promise<WebhookEndpoint> {
    return unwrap(this.api.PATCH('/v1/webhook-endpoints/{id}', { params: { path: { id } }, body }));
  }

  delete(id: string) {
    return unwrap(this.api.DELETE('/v1/webhook-endpoints/{id}', { params: { path: { id } } }));
  }

  list(query: ListQuery = {}): Promise<List<WebhookEndpoint>> {
    return unwrap(this.api.GET('/v1/webhook-endpoints', { params: { query } }));
  }

  retrieveSecret(id: string) {
    return unwrap(this.api.GET('/v1/webhook-endpoints/{id}/secret', { params: { path: { id } } }));
  }

  rotateSecret(id: string) {
    return unwrap(this.api.POST('/v1/webhook-endpoints/{id}/rotate-secret', { params: { path: { id } } }));
  }

  sendTestEvent(id: string): Promise<Event> {
    return unwrap(this.api.POST('/v1/webhook-endpoints/{id}/test', { params: { path: { id } } }));
  }

  listDeliveryAttempts(id: string, query: DeliveryAttemptListQuery = {}): Promise<List<WebhookDeliveryAttempt>> {
    return unwrap(this.api.GET('/v1/webhook-endpoints/{id}/deliveries', { params: { path: { id }, query } }));
  }

  resend(id: string, eventId: string) {
    return unwrap(this.api.POST('/v1/webhook-endpoints/{id}/deliveries/resend', { params: { path: { id } }, body: { event_id: eventId } }));
  }
}
