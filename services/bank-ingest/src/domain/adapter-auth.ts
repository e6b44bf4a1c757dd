import { Webhook } from 'standardwebhooks';

export interface AdapterSecret {
  id: string;
  secret: string;
}

export interface SignedRequest {
  rawBody: string;
  headers: Record<string, string>;
}

/**
 * Finds the adapter whose secret signed the request (Standard Webhooks: id, timestamp within
 * 5 minutes, HMAC over the raw body, constant-time comparison inside the library).
 * Returns undefined when none did.
 */
export function findSigningAdapter(adapters: AdapterSecret[], request: SignedRequest): string | undefined {
  for (const adapter of adapters) {
    try {
      new Webhook(adapter.secret).verify(request.rawBody, request.headers);
      return adapter.id;
    } catch {
      // Not this adapter's signature (or stale/malformed); try the next.
    }
  }
  return undefined;
}
