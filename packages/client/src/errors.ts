import type { components } from './generated/api';
import type { ErrorCodeOf, OperationId } from './types';

export type ErrorBody = components['schemas']['Error'];
export type ErrorType = ErrorBody['error']['type'];
export type ErrorCode = ErrorBody['error']['code'];

/**
 * The API refused a request: `code` is the one to branch on (e.g. `external_id_conflict`), `status`
 * its HTTP status, `operation` the call refused (its OpenAPI operationId, e.g. `createOrder`).
 * `ApiError.is(error, 'createOrder')` narrows `code` to the codes that operation can answer.
 * `requestId` identifies the request in the service's logs.
 */
export class ApiError<Code extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: ErrorType;
  readonly code: Code;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  /** The operation refused; undefined for a request sent through `raw`. */
  readonly operation: OperationId | undefined;
  /** Seconds the answer asked to wait before retrying (429, 503), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, body: ErrorBody['error'] & { code: Code }, headers: Headers, operation?: OperationId) {
    super(body.message);
    this.status = status;
    this.type = body.type;
    this.code = body.code;
    this.param = body.param;
    this.requestId = body.request_id ?? headers.get('request-id') ?? undefined;
    this.operation = operation;
    const retryAfter = Number(headers.get('retry-after') ?? Number.NaN);
    this.retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
  }

  /**
   * Whether `error` is the refusal of `operation`, its `code` then one of the codes the OpenAPI
   * document lists for it, so a `switch` over them is checked for exhaustiveness.
   */
  static is<Op extends OperationId>(error: unknown, operation: Op): error is ApiError<ErrorCodeOf<Op>> {
    return error instanceof ApiError && error.operation === operation;
  }

  /** The error of an answer that is not 2xx; one without our error body (a proxy's page) still becomes one. */
  static from(response: Response, body: unknown, operation?: OperationId): ApiError {
    const error = (body as Partial<ErrorBody> | undefined)?.error;
    if (error !== undefined && typeof error.code === 'string' && typeof error.message === 'string') {
      return new ApiError(response.status, error, response.headers, operation);
    }
    const code: ErrorCode = response.status >= 500 ? 'internal_error' : 'parameter_invalid';
    const type: ErrorType = response.status >= 500 ? 'api_error' : 'invalid_request_error';
    const message = `HTTP ${response.status} without an error body`;
    return new ApiError(response.status, { type, code, message, request_id: response.headers.get('request-id') ?? '' }, response.headers, operation);
  }
}

/**
 * No answer came: the connection failed, or no answer within the request's timeout (`timedOut`).
 * Whether the request was carried out is unknown.
 */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  readonly timedOut: boolean;

  constructor(message: string, options: { cause?: unknown; timedOut?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.timedOut = options.timedOut ?? false;
  }
}

/** A webhook whose signature, timestamp or body could not be verified: answer it with 400 and ignore it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}
