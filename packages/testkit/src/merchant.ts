import { PaymentsClient, type CreateOrderRequest, type CreateTestDepositRequest, type RecordedEvent, type RecordedEventType } from '@pmatch/client';
import { api, type ApiResponse } from './client';
import { assertDocumentedResponse } from './openapi-validator';

let sequence = 0;

/** The fetch of the tests' merchant: every JSON answer of a /v1 endpoint is checked against the OpenAPI document. */
async function documentCheckedFetch(request: Request): Promise<Response> {
  const response = await fetch(request);
  const url = new URL(request.url);
  if (url.pathname.startsWith('/v1/') && response.headers.get('content-type')?.startsWith('application/json')) {
    assertDocumentedResponse(request.method, `${url.pathname}${url.search}`, response.status, await response.clone().json());
  }
  return response;
}

/**
 * A merchant's server as tests play it: one API key, the typed client merchants use
 * (@pmatch/client), and shorthands for the calls tests repeat, answering `any` so tests read what
 * they assert freely. `request` sends exactly what a test gives, hostile input included, and
 * retries nothing.
 */
export class MerchantClient {
  readonly client: PaymentsClient;

  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {
    this.client = new PaymentsClient({ apiKey: key, baseUrl, fetch: documentCheckedFetch });
  }

  request<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>> {
    return api<T>(this.baseUrl, method, path, { key: this.key, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
  }

  /** Creates an order (with a fresh Idempotency-Key, as the client sends); throws the ApiError unless it is created. */
  async createOrder(overrides: Record<string, unknown> = {}): Promise<any> {
    sequence += 1;
    return this.client.orders.create({
      amount: 5000,
      payer_name: 'ヤマダ タロウ',
      external_id: `order-${process.pid}-${sequence}`,
      item_name: 'お米 5kg',
      ...overrides,
    } as CreateOrderRequest);
  }

  /** Posts a test deposit; throws the ApiError unless the service answers with the decision. */
  async deposit(amount: number, counterparty = 'ヤマダ タロウ', extra: Record<string, unknown> = {}): Promise<any> {
    return this.client.testDeposits.create({ amount, counterparty, ...extra } as CreateTestDepositRequest);
  }

  async order(id: string): Promise<any> {
    return this.client.orders.retrieve(id);
  }

  async transaction(id: string): Promise<any> {
    return this.client.transactions.retrieve(id);
  }

  /** Every event of this key's mode, in recorded order (all pages). */
  async events(type?: RecordedEventType): Promise<any[]> {
    const all: RecordedEvent[] = [];
    for await (const event of this.client.events.listAll({ limit: 100, ...(type ? { type } : {}) })) all.push(event);
    return all;
  }

  async eventTypes(): Promise<string[]> {
    return (await this.events()).map((e) => e.type);
  }
}
