import { z } from './zod';

/** Every error code the API can answer with (docs/guide.md "Requests and errors"). */
export const ERROR_CODES = [
  'parameter_missing',
  'parameter_invalid',
  'parameter_unknown',
  'invalid_json',
  'body_too_large',
  'statement_invalid',
  'ordered_at_in_future',
  'invalid_api_key',
  'insufficient_scope',
  'account_not_allowed',
  'resource_missing',
  'external_id_conflict',
  'transaction_not_matchable',
  'order_taken',
  'reverse_window_passed',
  'order_not_open',
  'open_order_with_same_amount',
  'no_dedicated_account_free',
  'transaction_not_excludable',
  'transaction_not_excluded',
  'idempotency_key_reused',
  'idempotency_key_in_use',
  'endpoint_limit_reached',
  'url_not_allowed',
  'secret_unavailable',
  'rate_limited',
  'service_unavailable',
  'internal_error',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'conflict_error',
  'rate_limit_error',
  'api_error',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/** The one place where a code decides its HTTP status. */
const STATUS_BY_CODE: Record<ErrorCode, number> = {
  parameter_missing: 400,
  parameter_invalid: 400,
  parameter_unknown: 400,
  invalid_json: 400,
  body_too_large: 413,
  statement_invalid: 422,
  ordered_at_in_future: 400,
  invalid_api_key: 401,
  insufficient_scope: 403,
  account_not_allowed: 403,
  resource_missing: 404,
  external_id_conflict: 409,
  transaction_not_matchable: 409,
  order_taken: 409,
  reverse_window_passed: 409,
  order_not_open: 409,
  open_order_with_same_amount: 409,
  no_dedicated_account_free: 409,
  transaction_not_excludable: 409,
  transaction_not_excluded: 409,
  idempotency_key_reused: 400,
  idempotency_key_in_use: 409,
  endpoint_limit_reached: 400,
  url_not_allowed: 400,
  secret_unavailable: 409,
  rate_limited: 429,
  service_unavailable: 503,
  internal_error: 500,
};

export function statusOfCode(code: ErrorCode): number {
  return STATUS_BY_CODE[code];
}

export function typeOfStatus(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}

export const ErrorBody = z
  .object({
    error: z.object({
      type: z.enum(ERROR_TYPES),
      code: z.enum(ERROR_CODES),
      message: z.string(),
      param: z.string().optional(),
      /** `statement_invalid` only: the record (1-based) and the field that failed the check. */
      line: z.int().optional(),
      field: z.string().optional(),
      request_id: z.string(),
    }),
  })
  .openapi('Error');
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Where in an uploaded file a check failed: the record (1-based) and the field. */
export interface ErrorLocation {
  line: number;
  field: string;
}

/**
 * The single error type of every service. Anything thrown that is not an AppError is a bug and
 * answers 500 `internal_error` without details.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | undefined;
  readonly location: ErrorLocation | undefined;

  constructor(code: ErrorCode, message: string, options: { param?: string; cause?: unknown; location?: ErrorLocation } = {}) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = statusOfCode(code);
    this.param = options.param;
    this.location = options.location;
  }

  toBody(requestId: string): ErrorBody {
    return {
      error: {
        type: typeOfStatus(this.status),
        code: this.code,
        message: this.message,
        ...(this.param === undefined ? {} : { param: this.param }),
        ...(this.location === undefined ? {} : { line: this.location.line, field: this.location.field }),
        request_id: requestId,
      },
    };
  }
}

/** The portable form of an AppError, carried in broker replies. */
export const WireError = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  param: z.string().optional(),
});
export type WireError = z.infer<typeof WireError>;

export function toWireError(error: AppError): WireError {
  return { code: error.code, message: error.message, ...(error.param === undefined ? {} : { param: error.param }) };
}

export function fromWireError(wire: WireError): AppError {
  return new AppError(wire.code, wire.message, wire.param === undefined ? {} : { param: wire.param });
}
