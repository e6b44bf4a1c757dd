import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError } from './errors';
import type { Event } from './types';

/** Headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function signatureHeaders(headers: WebhookHeaders): Record<string, string> {
  const read = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    const value = key === undefined ? undefined : headers[key];
    return Array.isArray(value) ? value.join(' ') : value;
  };
  const found: Record<string, string> = {};
  for (const name of SIGNATURE_HEADERS) {
    const value = read(name);
    if (value === undefined) throw new WebhookVerificationError(`Missing ${name} header.`);
    found[name] = value;
  }
  return found;
}

/**
 * Verifies deliveries to one webhook endpoint with its signing secret (`whsec_…`), or with several
 * while a rotation is under way, and returns the event. The body must be the raw bytes as received:
 * JSON parsed and serialised again no longer matches its signature.
 */
export class WebhookVerifier {
  private readonly verifiers: Webhook[];

  constructor(secrets: string | readonly string[]) {
    const list = typeof secrets === 'string' ? [secrets] : [...secrets];
    if (list.length === 0) throw new TypeError('WebhookVerifier needs at least one signing secret');
    this.verifiers = list.map((secret) => new Webhook(secret));
  }

  /** The event, once its signature and timestamp (within 5 minutes) check out; else WebhookVerificationError. */
  verify(rawBody: string | Buffer | Uint8Array, headers: WebhookHeaders): Event {
    const signed = signatureHeaders(headers);
    const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
    let problem: unknown;
    for (const verifier of this.verifiers) {
      try {
        return verifier.verify(body, signed) as Event;
      } catch (error) {
        problem = error;
      }
    }
    throw new WebhookVerificationError(`The webhook could not be verified: ${(problem as Error).message}`, { cause: problem });
  }
}
