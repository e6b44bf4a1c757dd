import { ApiError } from './errors';
import { retryingFetch, type AttemptOptions, type Fetch } from './retry';
import type { OperationId } from './types';

/** Options of one call, beside its arguments; each overrides the client's own for this call. */
export interface RequestOptions {
  /** How long each attempt may wait for its answer (ms); past it the answer counts as lost (`ConnectionError`, `timedOut`). */
  timeoutMs?: number;
  /** Aborts the call, its attempt in flight and its retries; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Retries after the first attempt; 0 sends the request once. */
  maxRetries?: number;
}

/** What the answer to a call said beside its body, as `lastResponse` on the object it answered. */
export interface ResponseMetadata {
  /** The HTTP status: `201` for a new order, `200` for one registered before with the same `external_id`. */
  statusCode: number;
  /** The `Request-Id` header: quote it when you ask about a request. */
  requestId: string | undefined;
  /** Whether this is the stored answer to an earlier request with the same Idempotency-Key (`Idempotent-Replayed: true`). */
  idempotentReplayed: boolean;
  /** The Idempotency-Key sent, for the calls that send one. */
  idempotencyKey: string | undefined;
  headers: Headers;
}

/** An object the API answered, with `lastResponse`: not enumerable, so JSON and equality checks see only the object. */
export type WithResponse<T> = T & { readonly lastResponse: ResponseMetadata };

type Answer = { data?: unknown; error?: unknown; response: Response };

/** How every resource sends: the client's fetch, wrapped per call in its deadline and retries. */
export class Transport {
  constructor(
    private readonly send: Fetch,
    private readonly defaults: AttemptOptions,
  ) {}

  /** The options openapi-fetch takes for one call: a fetch with the call's deadline and retries, and its signal. */
  init(options: RequestOptions): { fetch: Fetch; signal?: AbortSignal } {
    const fetch = retryingFetch(this.send, {
      ...this.defaults,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    });
    return options.signal === undefined ? { fetch } : { fetch, signal: options.signal };
  }
}

/**
 * The body of a 2xx answer with its `lastResponse`; any other answer throws the ApiError of
 * `operation`.
 */
export async function answerOf<A extends Answer>(
  operation: OperationId,
  call: Promise<A>,
  idempotencyKey?: string,
): Promise<WithResponse<NonNullable<A['data']>>> {
  const { data, error, response } = await call;
  if (!response.ok) throw ApiError.from(response, error, operation);
  const metadata: ResponseMetadata = {
    statusCode: response.status,
    requestId: response.headers.get('request-id') ?? undefined,
    idempotentReplayed: response.headers.get('idempotent-replayed') === 'true',
    idempotencyKey,
    headers: response.headers,
  };
  return Object.defineProperty(data as object, 'lastResponse', { value: metadata, enumerable: false }) as WithResponse<NonNullable<A['data']>>;
}
