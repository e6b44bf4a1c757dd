import { Counter, type Registry } from 'prom-client';
import type { Logger } from './logger';

/**
 * A message whose ids contradict the rows they name: an order, transaction or event of another
 * organisation, mode or bank account than the message says, or one that does not exist. It was
 * forged or published by a bug; carrying it out could act on another seller's data, and retrying it
 * can never succeed. Its consumer changes nothing, acknowledges it, and reports it (`reportOutOfScope`).
 */
export class OutOfScopeError extends Error {
  override name = 'OutOfScopeError';
}

/** Where a consumer reports messages (or items of a batched message) it refused as out of scope. */
export interface OutOfScopeReport {
  logger: Logger;
  /** Counts one refused message or item, by queue (`pmatch_messages_out_of_scope_total`). */
  count?: (queue: string) => void;
}

/**
 * Logs a refused message as a warning (ids only: they are no secrets; never the message body) and
 * counts it. `detail` says which row disagreed with which claim.
 */
export function reportOutOfScope(report: OutOfScopeReport, queue: string, messageId: string, detail: string): void {
  report.logger.warn({ queue, messageId, detail }, 'message out of its scope acknowledged without effect');
  report.count?.(queue);
}

/** `pmatch_messages_out_of_scope_total{queue}`: messages (or items of a batched one) refused as out of scope. */
export function outOfScopeCounter(registry: Registry): (queue: string) => void {
  const counter = new Counter({
    name: 'pmatch_messages_out_of_scope_total',
    help: 'Messages, or items of a batched message, that named rows of another organisation, mode or bank account (or none): acknowledged without effect',
    labelNames: ['queue'],
    registers: [registry],
  });
  return (queue) => counter.inc({ queue });
}
