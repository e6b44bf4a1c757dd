import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';

/**
 * The W3C Trace Context of the work at hand (https://www.w3.org/TR/trace-context/): the trace one
 * deposit's or request's work shares across services, and this service's span of it. Carried in
 * the `traceparent` HTTP and AMQP header and stamped on outbox rows, so that every log line about
 * one deposit has the same `trace_id` (docs/decisions/0062-trace-context-in-logs-and-messages.md).
 */
export interface TraceContext {
  traceId: string;
  spanId: string;
  /** Trace flags, two hex digits (01: sampled), passed on as received. */
  flags: string;
}

export const TRACEPARENT_HEADER = 'traceparent';

const storage = new AsyncLocalStorage<TraceContext>();
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** A `traceparent` value's context, or undefined for one that is malformed, of version ff, or all-zero. */
export function parseTraceparent(value: unknown): TraceContext | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  // Version 00 has exactly four fields; a later version may add some, which are ignored.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, flags };
}

export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags}`;
}

/** Random bytes for ids, drawn 4 KiB at a time: a draw per id (two per request) cost more than the rest of the trace. */
const randomPool = Buffer.alloc(4096);
let randomPoolUsed = randomPool.length;

function randomHex(bytes: number): string {
  if (randomPoolUsed + bytes > randomPool.length) {
    randomFillSync(randomPool);
    randomPoolUsed = 0;
  }
  randomPoolUsed += bytes;
  return randomPool.toString('hex', randomPoolUsed - bytes, randomPoolUsed);
}

/** A new span of the trace `traceparent` names, or of a new trace when it names none. */
export function continueTrace(traceparent?: unknown): TraceContext {
  const parent = parseTraceparent(traceparent);
  const spanId = randomHex(8);
  return parent === undefined ? { traceId: randomHex(16), spanId, flags: '01' } : { traceId: parent.traceId, spanId, flags: parent.flags };
}

/** Runs `work` as part of `context`: what it logs and the messages it records carry it. */
export function runInTrace<T>(context: TraceContext, work: () => T): T {
  return storage.run(context, work);
}

export function currentTrace(): TraceContext | undefined {
  return storage.getStore();
}

/** The `traceparent` to send on with what the work at hand publishes, if it runs in a trace. */
export function currentTraceparent(): string | undefined {
  const context = storage.getStore();
  return context === undefined ? undefined : formatTraceparent(context);
}
