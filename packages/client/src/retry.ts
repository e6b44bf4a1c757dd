import { ConnectionError } from './errors';

export interface RetryOptions {
  /** Retries after the first attempt; 0 sends every request once. Default 3. */
  maxRetries?: number;
  /** The first backoff; each retry doubles it, up to `maxDelayMs`. Default 500 ms. */
  initialDelayMs?: number;
  /** The longest wait between attempts, Retry-After included: a longer Retry-After is not waited for. Default 30 s. */
  maxDelayMs?: number;
  /** How a wait is made (tests may record it); it should end early when `signal` aborts. Default a timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface AttemptOptions extends RetryOptions {
  /** How long one attempt may wait for its answer; past it, the answer counts as lost. Default 30 s. */
  timeoutMs?: number;
}

export type Fetch = (request: Request) => Promise<Response>;

export const DEFAULT_TIMEOUT_MS = 30_000;

/** A timer that ends early, rejecting with the signal's reason, when the signal aborts. */
function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `wait`, or the signal's reason as soon as it aborts, whichever comes first. */
function untilAborted(wait: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    wait.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

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

/**
 * A fetch that gives each attempt `timeoutMs`, retries with backoff (full jitter) and waits as long
 * as Retry-After says. The request's own signal (the caller's) ends it all at once, attempt or
 * wait, rejecting with the signal's reason; nothing is retried after it.
 */
export function retryingFetch(inner: Fetch, options: AttemptOptions = {}): Fetch {
  const maxRetries = options.maxRetries ?? 3;
  const initialDelayMs = options.initialDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const sleep = options.sleep ?? sleepFor;
  const backoff = (retry: number) => {
    const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** retry);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  };

  return async (request) => {
    const caller = request.signal;
    const wait = (ms: number) => untilAborted(sleep(ms, caller), caller);
    for (let retry = 0; ; retry += 1) {
      caller.throwIfAborted();
      const deadline = AbortSignal.timeout(timeoutMs);
      let response: Response;
      try {
        response = await inner(new Request(request.clone(), { signal: AbortSignal.any([caller, deadline]) }));
      } catch (error) {
        if (caller.aborted) throw caller.reason;
        if (retry >= maxRetries || !repeatable(request)) {
          const what = `${request.method} ${new URL(request.url).pathname}`;
          const timedOut = deadline.aborted;
          const message = timedOut ? `${what}: no answer within ${timeoutMs} ms` : `${what}: no answer (${(error as Error).message})`;
          throw new ConnectionError(message, { cause: error, timedOut });
        }
        await wait(backoff(retry));
        continue;
      }
      if (retry >= maxRetries || !(await retryable(request, response))) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== undefined && asked > maxDelayMs) return response;
      await response.body?.cancel();
      await wait(asked ?? backoff(retry));
    }
  };
}
