import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { ErrorBody, statusOfCode, typeOfStatus, type ErrorCode, type ErrorType } from '../errors';
import { z } from '../zod';
import { EXAMPLE_IDS, exampleError } from './examples';

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The headers and parameters every document of ours shares, registered once per document. */
export function registerSharedComponents(registry: OpenAPIRegistry): void {
  registry.registerComponent('headers', 'Request-Id', {
    description: 'Identifies this request in our logs. Every response carries it; quote it when you ask about a request.',
    schema: { type: 'string', pattern: '^req_[0-9a-f]{32}$' },
    example: EXAMPLE_IDS.request,
  });
  registry.registerComponent('headers', 'Retry-After', {
    description: 'Seconds to wait before sending the request again.',
    schema: { type: 'integer', minimum: 1 },
    example: 1,
  });
}

export function registerIdempotencyComponents(registry: OpenAPIRegistry): void {
  registry.registerComponent('headers', 'Idempotent-Replayed', {
    description: '`true` when this answer is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  });
  registry.registerComponent('parameters', 'Idempotency-Key', {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a retry safe: a repeat with the same key and the same body within 24 hours, sent with the same API key, gets the first answer ' +
      '(with `Idempotent-Replayed: true`) and creates nothing. The same key with another body is ' +
      '`idempotency_key_reused`; a repeat while the first is still running is `idempotency_key_in_use`. ' +
      'Use a random value (a UUID) per order you mean to create.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    example: '5f0c8a0e-9a43-4d1c-8f0e-3b1d2c4a5e6f',
  });
}

/** Headers of every response; `retryAfter` adds Retry-After. */
export function responseHeaders(options: { retryAfter?: boolean; replayed?: boolean } = {}): Record<string, { $ref: string }> {
  return {
    'Request-Id': headerRef('Request-Id'),
    ...(options.retryAfter ? { 'Retry-After': headerRef('Retry-After') } : {}),
    ...(options.replayed ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {}),
  };
}

const STATUS_MEANING: Record<number, string> = {
  400: 'The request is invalid; nothing was stored',
  401: 'The API key is missing, malformed, unknown or revoked',
  403: 'The key may not do this',
  404: 'No such object for this key',
  409: 'The request conflicts with the state of the object; nothing was changed',
  413: 'The body is larger than allowed (1 MiB; a statement file STATEMENT_MAX_BYTES)',
  422: 'The file failed a check; nothing was stored',
  429: 'Too many requests; wait for Retry-After seconds',
  500: 'An error on our side; it has been logged',
  503: 'Briefly unable to answer; nothing was carried out, retry after Retry-After seconds',
};

/** The error body of one status: its `type`, and `code` one of those given. */
function errorBodyWith(status: number, codes: ErrorCode[]) {
  const error = ErrorBody.shape.error;
  return z.object({ error: error.extend({ type: z.literal(typeOfStatus(status)), code: z.enum(codes as [ErrorCode, ...ErrorCode[]]) }) });
}

/**
 * One response per error status, naming its codes, with an example body for each. The schema is
 * the error body with `code` limited to those codes, so answers are checked against them too.
 */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, ResponseConfig> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(statusOfCode(code), [...(byStatus.get(statusOfCode(code)) ?? []), code]);
  const responses: Record<string, ResponseConfig> = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `${STATUS_MEANING[status] ?? 'Error'}. Codes: ${statusCodes.map((c) => `\`${c}\``).join(', ')}.`,
      headers: responseHeaders({ retryAfter: status === 429 || status === 503 }),
      content: {
        'application/json': {
          schema: errorBodyWith(status, statusCodes),
          examples: Object.fromEntries(statusCodes.map((code) => [code, { summary: code, value: exampleError(code) }])),
        },
      },
    };
  }
  return responses;
}

/** Answers no operation documents (a malformed request, a proxy's): still the error body. */
export const DEFAULT_ERROR: ResponseConfig = {
  description: 'Any other error, with the same body.',
  headers: responseHeaders(),
  content: { 'application/json': { schema: ErrorBody } },
};

/**
 * Any other status (a request that is not valid HTTP: 400, 408, 431), still with the error body and
 * one of the operation's codes. Its schema names every code the operation can answer, so that a
 * client generated from the document (whose error type is the union of an operation's error
 * responses, this one included) narrows `code` to them.
 */
export function defaultErrorResponse(codes: readonly ErrorCode[]): ResponseConfig {
  const types = [...new Set(codes.map((code) => typeOfStatus(statusOfCode(code))))];
  const ofThisOperation = z.object({
    error: z.object({ type: z.enum(types as [ErrorType, ...ErrorType[]]), code: z.enum(codes as [ErrorCode, ...ErrorCode[]]) }),
  });
  return {
    description: `Any other status, with the same body. Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    headers: responseHeaders(),
    content: { 'application/json': { schema: ErrorBody.and(ofThisOperation) } },
  };
}
