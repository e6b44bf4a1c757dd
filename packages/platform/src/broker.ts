import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import { AppError, EXCHANGES, QUEUES, ROUTING_KEYS } from '@pmatch/contracts';
import { TRACEPARENT_HEADER, continueTrace, currentTraceparent, runInTrace } from '@pmatch/db';
import type { z } from 'zod';
import { createLogger, type Logger } from './logger';

/** Deliveries after which a message that keeps failing is dead-lettered instead of retried. */
export const DELIVERY_LIMIT = 5;
/**
 * A failed message waits this long, doubled per earlier delivery (at most 30 s), before it goes
 * back: a database or Redis outage of half a minute then costs retries, not dead letters.
 */
export const DEFAULT_RETRY_BACKOFF_MS = 1000;
const MAX_RETRY_BACKOFF_MS = 30_000;

/** RabbitMQ's direct reply-to pseudo queue: replies without declaring a queue per request. */
const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

/**
 * The header of a request that says until when its caller waits (milliseconds since the epoch).
 * After that the caller has answered 503 and may retry; carrying out the request late would do it
 * twice (a retried test deposit stored twice), so it is dropped instead.
 */
export const DEADLINE_HEADER = 'x-deadline';

export interface QueueBinding {
  queue: string;
  exchange: string;
  routingKey: string;
}

/** Every queue and what feeds it. Command queues are fed through the default exchange. */
const BINDINGS: QueueBinding[] = [
  { queue: QUEUES.matcherDeposits, exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.depositReceived },
  { queue: QUEUES.matcherLateOrders, exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.orderRegistered },
  { queue: QUEUES.dispatcherEvents, exchange: EXCHANGES.events, routingKey: ROUTING_KEYS.eventRecorded },
  { queue: QUEUES.dispatcherRequests, exchange: EXCHANGES.events, routingKey: ROUTING_KEYS.webhookRequested },
];
const COMMAND_QUEUES = [QUEUES.matcherCommands, QUEUES.bankIngestCommands];

export interface Delivery<T> {
  body: T;
  messageId: string;
  redelivered: boolean;
  replyTo: string | undefined;
  correlationId: string | undefined;
  /** Until when the requester waits for the reply; undefined for messages that are not requests. */
  deadline: Date | undefined;
}

/**
 * Whether a request's caller has stopped waiting. Wall-clock time on purpose, not a service's
 * injectable clock: the deadline is the caller's real timer, set on its host, so hosts' clocks
 * must agree (NTP) to well within a request timeout.
 */
export function pastDeadline(delivery: Pick<Delivery<unknown>, 'deadline'>): boolean {
  return delivery.deadline !== undefined && Date.now() > delivery.deadline.getTime();
}

function deadlineOf(msg: ConsumeMessage): Date | undefined {
  const value: unknown = msg.properties.headers?.[DEADLINE_HEADER];
  return typeof value === 'number' && Number.isFinite(value) ? new Date(value) : undefined;
}

export type Handler<T> = (delivery: Delivery<T>) => Promise<void>;

/**
 * One AMQP connection per process: a confirm channel to publish (every publish waits for the
 * broker's ack), and one channel per consumer. If the connection drops, `onConnectionLost` is
 * called: services exit and their supervisor restarts them, so no half-recovered state survives.
 */
export class Broker {
  private rpcChannel: Promise<Channel> | undefined;
  private replyChannel: Promise<ConfirmChannel> | undefined;
  private statsChannel: Promise<Channel> | undefined;
  private readonly pendingReplies = new Map<string, (content: Buffer) => void>();
  private closing = false;

  private constructor(
    private readonly connection: ChannelModel,
    private readonly publisher: ConfirmChannel,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {}

  static async connect(url: string, prefix: string, logger: Logger, onConnectionLost: (error: Error) => void = () => undefined): Promise<Broker> {
    const connection = await amqp.connect(url, { clientProperties: { connection_name: prefix || 'pmatch' } });
    const publisher = await connection.createConfirmChannel();
    const broker = new Broker(connection, publisher, prefix, logger);
    connection.on('error', (error: Error) => logger.error({ err: error }, 'amqp connection error'));
    connection.on('close', (error?: Error) => {
      if (!broker.closing) onConnectionLost(error ?? new Error('amqp connection closed'));
    });
    try {
      await broker.ensureTopology();
    } catch (error) {
      await broker.close();
      throw error;
    }
    return broker;
  }

  /**
   * Declares the whole topology (exchanges, queues, dead-letter queues, bindings) under `prefix`,
   * as a user with configure rights (`pmatch_topology`): the migrate step's, before any service
   * starts. Idempotent.
   */
  static async declareTopology(url: string, prefix: string): Promise<void> {
    const connection = await amqp.connect(url, { clientProperties: { connection_name: `${prefix || 'pmatch'} topology` } });
    try {
      const broker = new Broker(connection, await connection.createConfirmChannel(), prefix, createLogger('topology', 'silent'));
      await broker.assertTopology();
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  name(base: string): string {
    return `${this.prefix}${base}`;
  }

  /**
   * Checks passively (no rights needed) that every exchange and queue exists; declares the
   * topology only if something is missing, which only a user with configure rights may (the
   * single RABBITMQ_URL of a development broker). A service's own user has none: it then stops
   * with a message naming the step that declares it.
   */
  private async ensureTopology(): Promise<void> {
    if (await this.topologyPresent()) return;
    try {
      await this.assertTopology();
    } catch (error) {
      const refused = /ACCESS_REFUSED|403/.test(error instanceof Error ? error.message : String(error));
      if (!refused) throw error;
      throw new Error(
        `the RabbitMQ topology (AMQP_PREFIX "${this.prefix}") is missing and this broker user may not declare it: ` +
          'run the migrate step (scripts/migrate.mjs with the topology user in RABBITMQ_URL) first',
        { cause: error },
      );
    }
  }

  /** Whether every exchange and queue exists, by passive checks on a channel of their own (a failed check closes it). */
  private async topologyPresent(): Promise<boolean> {
    const { queues, exchanges } = this.topologyNames();
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    try {
      for (const exchange of exchanges) await channel.checkExchange(exchange);
      for (const queue of queues) await channel.checkQueue(queue);
      return true;
    } catch {
      return false;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  private async assertTopology(): Promise<void> {
    const ch = this.publisher;
    await ch.assertExchange(this.name(EXCHANGES.bank), 'topic', { durable: true });
    await ch.assertExchange(this.name(EXCHANGES.events), 'topic', { durable: true });
    await ch.assertExchange(this.name(EXCHANGES.deadLetter), 'direct', { durable: true });
    const queues = [...BINDINGS.map((b) => b.queue), ...COMMAND_QUEUES];
    for (const queue of queues) {
      await ch.assertQueue(this.name(`${queue}.dead`), { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      await ch.bindQueue(this.name(`${queue}.dead`), this.name(EXCHANGES.deadLetter), queue);
      await ch.assertQueue(this.name(queue), {
        durable: true,
        arguments: {
          'x-queue-type': 'quorum',
          'x-delivery-limit': DELIVERY_LIMIT,
          'x-dead-letter-exchange': this.name(EXCHANGES.deadLetter),
          'x-dead-letter-routing-key': queue,
        },
      });
    }
    for (const b of BINDINGS) await ch.bindQueue(this.name(b.queue), this.name(b.exchange), b.routingKey);
  }

  /** Names of everything this prefix declared, for tests that clean up after themselves. */
  topologyNames(): { queues: string[]; exchanges: string[] } {
    const queues = [...BINDINGS.map((b) => b.queue), ...COMMAND_QUEUES];
    return {
      queues: queues.flatMap((q) => [this.name(q), this.name(`${q}.dead`)]),
      exchanges: Object.values(EXCHANGES).map((e) => this.name(e)),
    };
  }

  async deleteTopology(): Promise<void> {
    const { queues, exchanges } = this.topologyNames();
    for (const q of queues) await this.publisher.deleteQueue(q);
    for (const e of exchanges) await this.publisher.deleteExchange(e);
  }

  /** Publishes and resolves once the broker has taken responsibility for the message. */
  async publish(exchange: string, routingKey: string, body: unknown, options: { messageId: string; headers?: Record<string, unknown> }): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.publisher.publish(
        exchange === '' ? '' : this.name(exchange),
        routingKey,
        Buffer.from(JSON.stringify(body)),
        { persistent: true, contentType: 'application/json', messageId: options.messageId, headers: { ...traceHeaders(), ...options.headers } },
        (error: unknown) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve()),
      );
    });
  }

  /** Publishes a batch and waits for every confirm at once: the outbox relay's fast path. */
  async publishBatch(messages: { exchange: string; routingKey: string; body: unknown; messageId: string; traceparent?: string }[]): Promise<void> {
    for (const m of messages) {
      this.publisher.publish(this.name(m.exchange), m.routingKey, Buffer.from(JSON.stringify(m.body)), {
        persistent: true,
        contentType: 'application/json',
        messageId: m.messageId,
        ...(m.traceparent === undefined ? {} : { headers: { [TRACEPARENT_HEADER]: m.traceparent } }),
      });
    }
    await this.publisher.waitForConfirms();
  }

  /**
   * Consumes a queue. The body is parsed with the contract schema first: a message that does not
   * parse can never succeed, so it goes straight to the dead-letter queue. A handler that throws
   * gets the message back (nack, requeue) until the queue's delivery limit dead-letters it.
   * Acks come only after the handler resolved, i.e. after its DB transaction committed.
   */
  async consume<S extends z.ZodType>(
    queue: string,
    schema: S,
    handler: Handler<z.infer<S>>,
    options: { prefetch: number; retryBackoffMs?: number },
  ): Promise<() => Promise<void>> {
    const channel = await this.connection.createChannel();
    await channel.prefetch(options.prefetch);
    const inFlight = new Set<Promise<void>>();
    const stopping = new AbortController();
    const backoffMs = options.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS;
    const { consumerTag } = await channel.consume(this.name(queue), (msg: ConsumeMessage | null) => {
      if (msg === null) return;
      // Each message is handled as a span of the trace its publisher sent (or of a new one).
      const trace = continueTrace(msg.properties.headers?.[TRACEPARENT_HEADER]);
      const work = runInTrace(trace, () => this.handle(channel, queue, msg, schema, handler, { backoffMs, stopping: stopping.signal }));
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    });
    return async () => {
      await channel.cancel(consumerTag).catch(() => undefined);
      stopping.abort();
      await Promise.allSettled([...inFlight]);
      await channel.close().catch(() => undefined);
    };
  }

  private async handle<S extends z.ZodType>(
    channel: Channel,
    queue: string,
    msg: ConsumeMessage,
    schema: S,
    handler: Handler<z.infer<S>>,
    retry: { backoffMs: number; stopping: AbortSignal },
  ): Promise<void> {
    const messageId = typeof msg.properties.messageId === 'string' ? msg.properties.messageId : '';
    let body: z.infer<S>;
    try {
      body = schema.parse(JSON.parse(msg.content.toString('utf8')));
      if (messageId === '') throw new Error('message has no message id');
    } catch (error) {
      this.logger.error({ err: error, queue, messageId }, 'unparseable message dead-lettered');
      channel.nack(msg, false, false);
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
      this.logger.warn({ queue, messageId, deadline: delivery.deadline }, 'request past its deadline dropped: its caller has answered 503');
      channel.ack(msg);
      return;
    }
    try {
      await handler(delivery);
      channel.ack(msg);
    } catch (error) {
      const deliveries = Number(msg.properties.headers?.['x-delivery-count'] ?? 0);
      this.logger.error({ err: error, queue, messageId, deliveries }, 'message handling failed; will be redelivered');
      await abortableDelay(Math.min(retry.backoffMs * 2 ** deliveries, MAX_RETRY_BACKOFF_MS), retry.stopping);
      try {
        channel.nack(msg, false, true);
      } catch {
        // The channel is gone; the broker redelivers the unacked message anyway.
      }
    }
  }

  /** Sends a reply to a request's reply address (default exchange, direct reply-to name). */
  async reply(replyTo: string, correlationId: string, body: unknown): Promise<void> {
    try {
      const channel = await this.ensureReplyChannel();
      await new Promise<void>((resolve, reject) => {
        channel.publish('', replyTo, Buffer.from(JSON.stringify(body)), { correlationId, contentType: 'application/json' }, (error: unknown) =>
          error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
        );
      });
    } catch (error) {
      // The requester may have gone away (timeout, restart); the effect is committed regardless.
      this.logger.warn({ err: error, correlationId }, 'reply could not be delivered');
    }
  }

  /**
   * Replies go out on their own channel: the broker closes a channel that publishes to a reply
   * address whose requester has gone, and that must never take the outbox publisher with it.
   */
  private ensureReplyChannel(): Promise<ConfirmChannel> {
    if (!this.replyChannel) {
      const created = this.connection.createConfirmChannel();
      this.replyChannel = created;
      void created.then(
        (channel) => {
          channel.on('error', (error: Error) => this.logger.warn({ err: error }, 'reply channel error'));
          channel.on('close', () => {
            if (this.replyChannel === created) this.replyChannel = undefined;
          });
        },
        () => {
          if (this.replyChannel === created) this.replyChannel = undefined;
        },
      );
    }
    return this.replyChannel;
  }

  /**
   * Request/reply over direct reply-to. Resolves with the reply parsed by `schema`; rejects with
   * 503 `service_unavailable` when no reply comes in time. The request carries its deadline, and a
   * consumer drops it once that has passed (`pastDeadline`), so a caller that answered 503 and is
   * retried never sees the first attempt carried out as well. No broker `expiration`: quorum queues
   * would dead-letter expired requests, and a dead-letter queue is where poison messages wait for
   * an operator, not where routine timeouts belong.
   */
  async request<S extends z.ZodType>(queue: string, body: unknown, schema: S, timeoutMs: number): Promise<z.infer<S>> {
    const channel = await this.ensureRpcChannel();
    const correlationId = randomUUID();
    const deadline = Date.now() + timeoutMs;
    const reply = new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingReplies.delete(correlationId);
        reject(new AppError('service_unavailable', 'The request timed out; it may still complete. Read the object again before retrying.'));
      }, timeoutMs);
      this.pendingReplies.set(correlationId, (content) => {
        clearTimeout(timer);
        this.pendingReplies.delete(correlationId);
        resolve(content);
      });
    });
    channel.sendToQueue(this.name(queue), Buffer.from(JSON.stringify(body)), {
      persistent: true,
      contentType: 'application/json',
      messageId: correlationId,
      correlationId,
      replyTo: DIRECT_REPLY_TO,
      headers: { [DEADLINE_HEADER]: deadline, ...traceHeaders() },
    });
    return schema.parse(JSON.parse((await reply).toString('utf8')));
  }

  private ensureRpcChannel(): Promise<Channel> {
    this.rpcChannel ??= (async () => {
      const channel = await this.connection.createChannel();
      await channel.consume(
        DIRECT_REPLY_TO,
        (msg) => {
          if (msg === null) return;
          const id = msg.properties.correlationId as string | undefined;
          if (id !== undefined) this.pendingReplies.get(id)?.(msg.content);
        },
        { noAck: true },
      );
      return channel;
    })();
    return this.rpcChannel;
  }

  /**
   * Messages ready in a queue (its name without the prefix), by a passive check. On a channel of
   * its own: the broker closes the channel of a check that fails, and that must never be the
   * publisher's.
   */
  async messageCount(queue: string): Promise<number> {
    const opened = (this.statsChannel ??= this.connection.createChannel().then((channel) => {
      channel.on('error', () => undefined);
      channel.on('close', () => {
        if (this.statsChannel === opened) this.statsChannel = undefined;
      });
      return channel;
    }));
    try {
      return (await (await opened).checkQueue(this.name(queue))).messageCount;
    } catch (error) {
      if (this.statsChannel === opened) this.statsChannel = undefined;
      throw error;
    }
  }

  async ping(): Promise<void> {
    await this.publisher.checkExchange(this.name(EXCHANGES.events));
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.connection.close().catch(() => undefined);
  }
}

/** The current trace's header, for a message published as part of it. */
function traceHeaders(): Record<string, string> {
  const traceparent = currentTraceparent();
  return traceparent === undefined ? {} : { [TRACEPARENT_HEADER]: traceparent };
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
