import type { ConsumeMessage } from 'amqplib';
import { AppError } from '@pmatch/contracts';
import { TRACEPARENT_HEADER, currentTraceparent } from '@pmatch/db';

/**
 * The header of a request that says until when its caller waits (milliseconds since the epoch).
 * After that the caller has answered 503 and may retry; carrying out the request late would do it
 * twice (a retried test deposit stored twice), so it is dropped instead.
 */
export const DEADLINE_HEADER = 'x-deadline';

export interface Delivery<T> {
  body: T;
  messageId: string;
  redelivered: boolean;
  replyTo: string | undefined;
  correlationId: string | undefined;
  /** Until when the requester waits for the reply; undefined for messages that are not requests. */
  deadline: Date | undefined;
}

export type Handler<T> = (delivery: Delivery<T>) => Promise<void>;

/**
 * Whether a request's caller has stopped waiting. Wall-clock time on purpose, not a service's
 * injectable clock: the deadline is the caller's real timer, set on its host, so hosts' clocks
 * must agree (NTP) to well within a request timeout.
 */
export function pastDeadline(delivery: Pick<Delivery<unknown>, 'deadline'>): boolean {
  return delivery.deadline !== undefined && Date.now() > delivery.deadline.getTime();
}

export function deadlineOf(msg: ConsumeMessage): Date | undefined {
  const value: unknown = msg.properties.headers?.[DEADLINE_HEADER];
  return typeof value === 'number' && Number.isFinite(value) ? new Date(value) : undefined;
}

/** What publishing and requests answer while the connection is away: the caller retries later. */
export function notConnected(cause?: unknown): AppError {
  return new AppError('service_unavailable', 'The message broker is not reachable right now; retry shortly.', cause === undefined ? {} : { cause });
}

/** The current trace's header, for a message published as part of it. */
export function traceHeaders(): Record<string, string> {
  const traceparent = currentTraceparent();
  return traceparent === undefined ? {} : { [TRACEPARENT_HEADER]: traceparent };
}
