import { api, type ApiResponse } from './client';

let sequence = 0;

/** A merchant's server as tests play it: one API key, and shorthands for the calls tests repeat. */
export class MerchantClient {
  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}

  request<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>> {
    return api<T>(this.baseUrl, method, path, { key: this.key, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
  }

  /** Creates an order; fails the test unless it is created. */
  async createOrder(overrides: Record<string, unknown> = {}): Promise<any> {
    sequence += 1;
    const res = await this.request('POST', '/v1/orders', {
      amount: 5000,
      payer_name: 'ヤマダ タロウ',
      external_id: `order-${process.pid}-${sequence}`,
      item_name: 'お米 5kg',
      ...overrides,
    });
    if (res.status !== 201) throw new Error(`order not created: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Posts a test deposit; fails the test unless the service answers 201 with the decision. */
  async deposit(amount: number, counterparty = 'ヤマダ タロウ', extra: Record<string, unknown> = {}): Promise<any> {
    const res = await this.request('POST', '/v1/test/deposits', { amount, counterparty, ...extra });
    if (res.status !== 201) throw new Error(`deposit not decided: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async order(id: string): Promise<any> {
    return (await this.request('GET', `/v1/orders/${id}`)).body;
  }

  async transaction(id: string): Promise<any> {
    return (await this.request('GET', `/v1/transactions/${id}`)).body;
  }

  /** Every event of this key's mode, in recorded order (all pages). */
  async events(type?: string): Promise<any[]> {
    const all: any[] = [];
    let after: string | undefined;
    for (;;) {
      const query = new URLSearchParams({ limit: '100', ...(type ? { type } : {}), ...(after ? { starting_after: after } : {}) });
      const page = await this.request('GET', `/v1/events?${query}`);
      all.push(...page.body.data);
      if (!page.body.has_more) return all;
      after = page.body.data.at(-1).id;
    }
  }

  async eventTypes(): Promise<string[]> {
    return (await this.events()).map((e) => e.type);
  }
}
