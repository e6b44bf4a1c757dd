import createFetchClient, { type Client } from 'openapi-fetch';
import { Transport } from './request';
import { BankAccounts, Events, Orders, PaymentLinks, SettingsResource, TestDeposits, Transactions, WebhookEndpoints } from './resources';
import { retryingFetch, type AttemptOptions, type Fetch } from './retry';
import type { paths } from './types';

export interface ClientOptions extends AttemptOptions {
  /** `svc_test_…` or `svc_live_…`. */
  apiKey: string;
  /** Where the API is, without `/v1`: `https://api.example.com`. */
  baseUrl: string;
  /** The fetch requests go through; default the global one. */
  fetch?: Fetch;
}

/**
 * The API, typed from its OpenAPI document. Each call answers the object (with `lastResponse`:
 * status, request id, whether replayed), or throws an ApiError (or a ConnectionError when no
 * answer came in time); 429s, and server errors of requests safe to repeat, are retried as
 * Retry-After says or with backoff. Every call takes `RequestOptions` last: a timeout, an
 * AbortSignal, its retries.
 */
export class PaymentsClient {
  /** The typed openapi-fetch client underneath, for anything the resources do not cover. */
  readonly raw: Client<paths>;
  readonly orders: Orders;
  readonly paymentLinks: PaymentLinks;
  readonly transactions: Transactions;
  readonly events: Events;
  readonly bankAccounts: BankAccounts;
  readonly settings: SettingsResource;
  readonly testDeposits: TestDeposits;
  readonly webhookEndpoints: WebhookEndpoints;

  constructor(options: ClientOptions) {
    const { apiKey, baseUrl, fetch, ...attempts } = options;
    const send: Fetch = fetch ?? ((request) => globalThis.fetch(request));
    this.raw = createFetchClient<paths>({
      baseUrl: baseUrl.replace(/\/+$/, ''),
      fetch: retryingFetch(send, attempts),
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const transport = new Transport(send, attempts);
    this.orders = new Orders(this.raw, transport);
    this.paymentLinks = new PaymentLinks(this.raw, transport);
    this.transactions = new Transactions(this.raw, transport);
    this.events = new Events(this.raw, transport);
    this.bankAccounts = new BankAccounts(this.raw, transport);
    this.settings = new SettingsResource(this.raw, transport);
    this.testDeposits = new TestDeposits(this.raw, transport);
    this.webhookEndpoints = new WebhookEndpoints(this.raw, transport);
  }
}
