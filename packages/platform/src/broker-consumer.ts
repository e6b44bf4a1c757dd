import type { Channel, ConsumeMessage } from 'amqplib';
import type { z } from 'zod';
import { deadlineOf, pastDeadline, type Delivery, type Handler } from './broker-messages';
import type { Logger } from './logger';

/**
 * A failed message waits this long, doubled per earlier delivery (at most 30 s), before it goes
 * back: a database or Redis outage of half a minute then costs retries, not dead letters.
 */
export const DEFAULT_RETRY_BACKOFF_MS = 1000;
const MAX_RETRY_BACKOFF_MS = 30_000;

/**
 * Handles one consumed message: one that does not parse is dead-lettered, a request past its
 * deadline dropped, and otherwise `handler` runs; acked once it resolved, or put back after the
 * backoff (at once when the consumer stops) if it threw.
 */
export async function handleMessage<S extends z.ZodType>(
  channel: Channel,
  queue: string,
  msg: ConsumeMessage,
  schema: S,
  handler: Handler<z.infer<S>>,
  retry: { backoffMs: number; stopping: AbortSignal },
  logger: Logger,
): Promise<void> {
  const messageId = typeof msg.properties.messageId === 'string' ? msg.properties.messageId : '';
  let body: z.infer<S>;
  try {
    body = schema.parse(JSON.parse(msg.content.toString('utf8')));
    if (messageId === '') throw new Error('message has no message id');
  } catch (error) {
    logger.error({ err: error, queue, messageId }, 'unparseable message dead-lettered');
    settle(logger, channel, queue, messageId, () => channel.nack(msg, false, false));
    return;
  }
  const delivery: Delivery<z.infer<S>> = {
    body,
    messageId,
    redelivered: msg.fields.redelivered,
    replyTo: msg.properties.replyTo as string | undefined,
    correlationId: msg.properties.correlationId as string | undefined,
    deadline: deadlineOf(msg),
  };
  // Before anything else (and before this function first waits), so a request whose caller gave
  // up is gone before the next message is looked at.
  if (pastDeadline(delivery)) {
    logger.warn({ queue, messageId, deadline: delivery.deadline }, 'request past its deadline dropped: its caller has answered 503');
    settle(logger, channel, queue, messageId, () => channel.ack(msg));
    return;
  }
  try {
    await handler(delivery);
  } catch (error) {
    const deliveries = Number(msg.properties.headers?.['x-delivery-count'] ?? 0);
    logger.error({ err: error, queue, messageId, deliveries }, 'message handling failed; will be redelivered');
    await abortableDelay(Math.min(retry.backoffMs * 2 ** deliveries, MAX_RETRY_BACKOFF_MS), retry.stopping);
    settle(logger, channel, queue, messageId, () => channel.nack(msg, false, true));
    return;
  }
  settle(logger, channel, queue, messageId, () => channel.ack(msg));
}

/**
 * Acks or nacks on the channel the message came on. If that channel is gone (the connection
 * lost meanwhile), the broker has put the message back already and delivers it again: the
 * handler's effect is committed with its inbox row, so the next delivery changes nothing.
 */
function settle(logger: Logger, channel: Channel, queue: string, messageId: string, act: () => void): void {
  try {
    act();
  } catch (error) {
    logger.warn({ err: error, queue, messageId }, 'channel closed before the message was settled; the broker delivers it again');
  }
}

/** Waits, unless the consumer is stopping: then the message goes back at once. */
function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
