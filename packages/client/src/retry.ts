import { ConnectionError } from './errors';

export interface RetryOptions {
  /** Retries after the first attempt; 0 sends every request once. Default 3. */
  maxRetries?: number;
  /** The first backoff; each retry doubles it, up to `maxDelayMs`. Default 500 ms. */
  initialDelayMs?: number;
  /** The longest wait between attempts, Retry-After included: a longer Retry-After is not waited for. Default 30 s. */
  maxDelayMs?: number;
  /** How a wait is made (tests may record it). Default a timer. */
  sleep?: (ms: number) => Promise<void>;
}

export type Fetch = (request: Request) => Promise<Response>;

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The seconds or date of a Retry-After header, as milliseconds from now; undefined when absent
 * or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Whether sending the request again cannot do its work twice: a read, or a request carrying an
 * Idempotency-Key (the API answers its repeat from the first answer).
 */
function repeatable(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.headers.has('idempotency-key');
}

/**
 * Why an answer is worth another attempt, or undefined when it is final. 429 and a key still in
 * use were refused before any work, so any request may be repeated; a server error or a lost
 * answer only where repeating is safe. docs/decisions/0046-client-retries.md.
 */
async function retryable(request: Request, response: Response): Promise<boolean> {
  if (response.status === 429) return true;
  if (response.status === 409 && request.headers.has('idempotency-key')) {
    const body = (await response
      .clone()
      .json()
      .catch(() => undefined)) as { error?: { code?: string } } | undefined;
    return body?.error?.code === 'idempotency_key_in_use';
  }
  return response.status >= 500 && repeatable(request);
}

/** A fetch that retries with backoff (full jitter) and waits as long as Retry-After says. */
export function retryingFetch(inner: Fetch, options: RetryOptions = {}): Fetch {
  const maxRetries = options.maxRetries ?? 3;
  const initialDelayMs = options.initialDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const sleep = options.sleep ?? sleepFor;
  const backoff = (retry: number) => {
    const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** retry);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  };

  return async (request) => {
    for (let retry = 0; ; retry += 1) {
      let response: Response;
      try {
        response = await inner(request.clone());
      } catch (error) {
        if (retry >= maxRetries || !repeatable(request)) {
          throw new ConnectionError(`${request.method} ${new URL(request.url).pathname}: no answer (${(error as Error).message})`, { cause: error });
        }
        await sleep(backoff(retry));
        continue;
      }
      if (retry >= maxRetries || !(await retryable(request, response))) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== undefined && asked > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(asked ?? backoff(retry));
    }
  };
}
