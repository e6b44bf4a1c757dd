import createFetchClient, { type Client } from 'openapi-fetch';
import { BankAccounts, Events, Orders, PaymentLinks, SettingsResource, TestDeposits, Transactions, WebhookEndpoints } from './resources';
import { retryingFetch, type Fetch, type RetryOptions } from './retry';
import type { paths } from './types';

export interface ClientOptions extends RetryOptions {
  /** `svc_test_…` or `svc_live_…`. */
  apiKey: string;
  /** Where the API is, without `/v1`: `https://api.example.com`. */
  baseUrl: string;
  /** The fetch requests go through; default the global one. */
  fetch?: Fetch;
}

/**
 * The API, typed from its OpenAPI document. Each call answers the object, or throws an ApiError
 * (or a ConnectionError when no answer came); 429s, and server errors of requests safe to repeat,
 * are retried as Retry-After says or with backoff.
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
    const send: Fetch = options.fetch ?? ((request) => globalThis.fetch(request));
    this.raw = createFetchClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: retryingFetch(send, options),
      headers: { authorization: `Bearer ${options.apiKey}` },
    });
    this.orders = new Orders(this.raw);
    this.paymentLinks = new PaymentLinks(this.raw);
    this.transactions = new Transactions(this.raw);
    this.events = new Events(this.raw);
    this.bankAccounts = new BankAccounts(this.raw);
    this.settings = new SettingsResource(this.raw);
    this.testDeposits = new TestDeposits(this.raw);
    this.webhookEndpoints = new WebhookEndpoints(this.raw);
  }
}
