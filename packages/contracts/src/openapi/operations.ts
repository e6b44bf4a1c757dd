import type { z } from '../zod';
import type { ErrorCode } from '../errors';

export type Method = 'get' | 'post' | 'patch' | 'delete';

/** The groups of the reference, in the order it shows them. */
export const TAGS = {
  Orders: 'What a buyer pays for: register one, send the buyer to its `payment_url`, and hear when it is paid.',
  'Payment links': 'Pages for a fixed amount and item at which buyers create orders themselves: share one link instead of registering each order.',
  Transactions: 'Movements on the bank account. A deposit is matched to an order automatically, held for a person to choose, or left unmatched.',
  'Payer aliases': "Depositor names a person taught the service to read as an order's payer (a parent paying under their own name): rule `learned_payer`.",
  Events: 'Every state change, kept 30 days, in the order it was recorded. The same objects are delivered as webhooks.',
  'Bank accounts': 'The accounts buyers transfer to. They are set up by the operator; the API lists them.',
  Settings: 'How deposits are matched for this mode: name rules and late orders.',
  'Webhook endpoints': 'Where events are delivered, with their signing secrets and delivery logs.',
  'Test mode': 'Deposits made up for test keys, so an integration can be tried end to end without a bank.',
  Webhooks: 'What your webhook endpoint receives: one signed `POST` per event, the event as its body.',
} as const;
export type Tag = keyof typeof TAGS;

export interface Body {
  schema: z.ZodType;
  example: unknown;
}

export interface Operation {
  method: Method;
  /** OpenAPI template: `/v1/orders/{id}`. */
  path: string;
  operationId: string;
  tag: Tag;
  summary: string;
  /** Markdown: what it does, when to use it, what it refuses. */
  description: string;
  /** The `{id}` in the path, when there is one. */
  pathId?: z.ZodType;
  query?: z.ZodObject;
  /** Absent: the operation takes no body (an empty object or none). */
  request?: Body;
  /** Whether a repeat with the same Idempotency-Key is answered from the first answer. */
  idempotencyKey?: boolean;
  responses: Record<number, Body & { description: string }>;
  /** Codes beyond those every operation of its kind can answer (`errorCodesOf`). */
  errors?: ErrorCode[];
}

/** The /v1 operations. Adding an endpoint means adding it here (docs/decisions/0045-openapi-document-from-contracts.md). */
export const OPERATIONS: Operation[] = [];

export function document(operation: Operation): void {
  OPERATIONS.push(operation);
}

/** Every error code an operation can answer: those of every request of its kind, and its own. */
export function errorCodesOf(operation: Operation): ErrorCode[] {
  const codes = new Set<ErrorCode>(['invalid_api_key', 'parameter_invalid', 'rate_limited', 'internal_error', 'service_unavailable']);
  const add = (...more: ErrorCode[]) => more.forEach((code) => codes.add(code));
  if (operation.method !== 'get') add('insufficient_scope');
  if (operation.method === 'post' || operation.method === 'patch') add('invalid_json', 'body_too_large', 'parameter_unknown');
  if (operation.request !== undefined) add('parameter_missing');
  if (operation.query !== undefined) add('parameter_unknown');
  if (operation.pathId !== undefined) add('resource_missing');
  add(...(operation.errors ?? []));
  return [...codes];
}
