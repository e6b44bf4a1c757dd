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

/** Reconnect attempts wait this long at first, doubling (with ±25 % jitter) up to the maximum. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 10_000;
/** A consumer whose channel alone closed (the connection still up) is started again after this. */
const CONSUMER_RESTART_MS = 1_000;

export interface BrokerOptions {
  /** Told each time the connection is lost; the broker then reconnects by itself. */
  onConnectionLost?: (error: Error) => void;
  /** Told each time the connection is back, with the topology declared and every consumer consuming again. */
  onReconnected?: () => void;
}

/** A consumer as `consume` registered it: started on every connection until stopped. */
interface Consumer {
  start(connection: ChannelModel): Promise<void>;
  stop(): Promise<void>;
}

/**
 * One AMQP connection per process: a confirm channel to publish, one channel per consumer. When
 * the connection drops it reconnects inside the process with backoff, declares its topology and
 * starts its consumers again; meanwhile `ping` fails and publishing and requests fail at once.
 * Only the first connection must succeed (docs/decisions/0084-services-reconnect-inside-the-process.md).
 */
export class Broker {
  private connection: ChannelModel | undefined;
  private publisher: ConfirmChannel | undefined;
  /** Connected, topology declared, every consumer consuming. */
  private ready = false;
  private rpcChannel: Promise<Channel> | undefined;
  private replyChannel: Promise<ConfirmChannel> | undefined;
  private statsChannel: Promise<Channel> | undefined;
  /** Requests waiting for their reply, by correlation id: `settle` with the reply, or with the error that ends the wait. */
  private readonly pendingReplies = new Map<string, (outcome: Buffer | AppError) => void>();
  private readonly consumers = new Set<Consumer>();
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** An `open` runs: a connection lost meanwhile makes it fail, and its failure schedules the next try. */
  private opening = false;
  private closing = false;

  private constructor(
    private readonly url: string,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly options: BrokerOptions,
  ) {}

  /** Connects (rejecting if RabbitMQ cannot be reached now) and declares the topology. */
  static async connect(url: string, prefix: string, logger: Logger, options: BrokerOptions = {}): Promise<Broker> {
    const broker = new Broker(url, prefix, logger, options);
    await broker.open();
    return broker;
  }

  /** Whether the connection is up, the topology declared and every consumer consuming. */
  get connected(): boolean {
    return this.ready;
  }

  /** Opens a connection, its publisher, the topology and every registered consumer; all or nothing. */
  private async open(): Promise<void> {
    this.opening = true;
    try {
      await this.openConnection();
    } finally {
      this.opening = false;
    }
  }

  private async openConnection(): Promise<void> {
    const connection = await amqp.connect(this.url, { clientProperties: { connection_name: this.prefix || 'pmatch' } });
    connection.on('error', (error: Error) => this.logger.error({ err: error }, 'amqp connection error'));
    connection.on('close', (error?: Error) => this.lost(connection, error ?? new Error('amqp connection closed')));
    try {
      const publisher = await connection.createConfirmChannel();
      publisher.on('error', (error: Error) => this.logger.error({ err: error }, 'amqp publisher channel error'));
      this.connection = connection;
      this.publisher = publisher;
      await this.ensureTopology();
      for (const consumer of this.consumers) await consumer.start(connection);
      if (this.closing) throw new Error('broker closed while connecting');
      this.ready = true;
    } catch (error) {
      this.forget(connection);
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  /** Drops what belonged to `connection`, if it is the current one; true if it was. */
  private forget(connection: ChannelModel): boolean {
    if (this.connection !== connection) return false;
    this.connection = undefined;
    this.publisher = undefined;
    this.ready = false;
    this.rpcChannel = undefined;
    this.replyChannel = undefined;
    this.statsChannel = undefined;
    // Replies come on the lost connection's reply-to: none can come now, so the callers are
    // answered at once rather than at their timeout.
    const lost = new AppError(
      'service_unavailable',
      'The connection to the message broker was lost while waiting for the reply; the request may still complete. Read the object again before retrying.',
    );
    for (const settle of [...this.pendingReplies.values()]) settle(lost);
    return true;
  }

  private lost(connection: ChannelModel, error: Error): void {
    if (!this.forget(connection) || this.closing) return;
    this.logger.error({ err: error }, 'RabbitMQ connection lost; reconnecting');
    this.options.onConnectionLost?.(error);
    if (!this.opening) this.scheduleReconnect(RECONNECT_FIRST_MS);
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.closing) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(
      () => {
        this.open().then(
          () => {
            this.logger.warn('RabbitMQ connection re-established; consuming again');
            this.options.onReconnected?.();
          },
          (error: unknown) => {
            if (this.closing) return;
            this.logger.warn({ err: error, retryInMs: Math.min(delayMs * 2, RECONNECT_MAX_MS) }, 'RabbitMQ reconnect failed; trying again');
            this.scheduleReconnect(Math.min(delayMs * 2, RECONNECT_MAX_MS));
          },
        );
      },
      delayMs * (0.75 + Math.random() * 0.5),
    );
  }

  /** The publisher channel, or a 503 at once while the connection is away. */
  private currentPublisher(): ConfirmChannel {
    if (this.publisher === undefined) throw notConnected();
    return this.publisher;
  }

  /** The connection, or a 503 at once while it is away. */
  private currentConnection(): ChannelModel {
    if (this.connection === undefined) throw notConnected();
    return this.connection;
  }

  /**
   * Declares the whole topology (exchanges, queues, dead-letter queues, bindings) under `prefix`,
   * as a user with configure rights (`pmatch_topology`): the migrate step's, before any service
   * starts. Idempotent.
   */
  static async declareTopology(url: string, prefix: string): Promise<void> {
    const broker = new Broker(url, prefix, createLogger('topology', 'silent'), {});
    const connection = await amqp.connect(url, { clientProperties: { connection_name: `${prefix || 'pmatch'} topology` } });
    broker.closing = true;
    try {
      broker.connection = connection;
      broker.publisher = await connection.createConfirmChannel();
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
    const channel = await this.currentConnection().createChannel();
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
    const ch = this.currentPublisher();
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
    const ch = this.currentPublisher();
    for (const q of queues) await ch.deleteQueue(q);
    for (const e of exchanges) await ch.deleteExchange(e);
  }

  /** Publishes and resolves once the broker has taken responsibility for the message. */
  async publish(exchange: string, routingKey: string, body: unknown, options: { messageId: string; headers?: Record<string, unknown> }): Promise<void> {
    const publisher = this.currentPublisher();
    await new Promise<void>((resolve, reject) => {
      publisher.publish(
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
    const publisher = this.currentPublisher();
    for (const m of messages) {
      publisher.publish(this.name(m.exchange), m.routingKey, Buffer.from(JSON.stringify(m.body)), {
        persistent: true,
        contentType: 'application/json',
        messageId: m.messageId,
        ...(m.traceparent === undefined ? {} : { headers: { [TRACEPARENT_HEADER]: m.traceparent } }),
      });
    }
    await publisher.waitForConfirms();
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
    const inFlight = new Set<Promise<void>>();
    const stopping = new AbortController();
    const backoffMs = options.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS;
    let current: { channel: Channel; consumerTag: string } | undefined;
    let restartTimer: NodeJS.Timeout | undefined;
    const consumer: Consumer = {
      start: async (connection) => {
        if (stopping.signal.aborted) return;
        const channel = await connection.createChannel();
        channel.on('error', (error: Error) => this.logger.error({ err: error, queue }, 'amqp consumer channel error'));
        channel.on('close', () => {
          if (current?.channel === channel) current = undefined;
          // The channel alone closed (the connection is up): consume again on a new one. A lost
          // connection starts every consumer again when it is back.
          if (stopping.signal.aborted || this.connection !== connection || !this.ready) return;
          clearTimeout(restartTimer);
          restartTimer = setTimeout(() => {
            if (this.connection === connection && current === undefined) {
              consumer.start(connection).catch((error: unknown) => this.logger.error({ err: error, queue }, 'consumer could not start again'));
            }
          }, CONSUMER_RESTART_MS);
        });
        await channel.prefetch(options.prefetch);
        const { consumerTag } = await channel.consume(this.name(queue), (msg: ConsumeMessage | null) => {
          if (msg === null) return;
          // Each message is handled as a span of the trace its publisher sent (or of a new one).
          const trace = continueTrace(msg.properties.headers?.[TRACEPARENT_HEADER]);
          const work = runInTrace(trace, () => this.handle(channel, queue, msg, schema, handler, { backoffMs, stopping: stopping.signal }));
          inFlight.add(work);
          void work.finally(() => inFlight.delete(work));
        });
        if (stopping.signal.aborted) {
          // Stopped while this start was under way (a reconnect): consume nothing on it.
          await channel.close().catch(() => undefined);
          return;
        }
        current = { channel, consumerTag };
      },
      stop: async () => {
        stopping.abort();
        clearTimeout(restartTimer);
        this.consumers.delete(consumer);
        const running = current;
        current = undefined;
        if (running !== undefined) await running.channel.cancel(running.consumerTag).catch(() => undefined);
        await Promise.allSettled([...inFlight]);
        if (running !== undefined) await running.channel.close().catch(() => undefined);
      },
    };
    await consumer.start(this.currentConnection());
    this.consumers.add(consumer);
    return () => consumer.stop();
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
      this.settle(channel, queue, messageId, () => channel.nack(msg, false, false));
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
      this.settle(channel, queue, messageId, () => channel.ack(msg));
      return;
    }
    try {
      await handler(delivery);
    } catch (error) {
      const deliveries = Number(msg.properties.headers?.['x-delivery-count'] ?? 0);
      this.logger.error({ err: error, queue, messageId, deliveries }, 'message handling failed; will be redelivered');
      await abortableDelay(Math.min(retry.backoffMs * 2 ** deliveries, MAX_RETRY_BACKOFF_MS), retry.stopping);
      this.settle(channel, queue, messageId, () => channel.nack(msg, false, true));
      return;
    }
    this.settle(channel, queue, messageId, () => channel.ack(msg));
  }

  /**
   * Acks or nacks on the channel the message came on. If that channel is gone (the connection
   * lost meanwhile), the broker has put the message back already and delivers it again: the
   * handler's effect is committed with its inbox row, so the next delivery changes nothing.
   */
  private settle(channel: Channel, queue: string, messageId: string, settle: () => void): void {
    try {
      settle();
    } catch (error) {
      this.logger.warn({ err: error, queue, messageId }, 'channel closed before the message was settled; the broker delivers it again');
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
      const created = Promise.resolve().then(() => this.currentConnection().createConfirmChannel());
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
    let channel: Channel;
    try {
      channel = await this.ensureRpcChannel();
    } catch (error) {
      throw error instanceof AppError ? error : notConnected(error);
    }
    const correlationId = randomUUID();
    const deadline = Date.now() + timeoutMs;
    const reply = new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingReplies.delete(correlationId);
        reject(new AppError('service_unavailable', 'The request timed out; it may still complete. Read the object again before retrying.'));
      }, timeoutMs);
      this.pendingReplies.set(correlationId, (outcome) => {
        clearTimeout(timer);
        this.pendingReplies.delete(correlationId);
        if (outcome instanceof AppError) reject(outcome);
        else resolve(outcome);
      });
    });
    try {
      channel.sendToQueue(this.name(queue), Buffer.from(JSON.stringify(body)), {
        persistent: true,
        contentType: 'application/json',
        messageId: correlationId,
        correlationId,
        replyTo: DIRECT_REPLY_TO,
        headers: { [DEADLINE_HEADER]: deadline, ...traceHeaders() },
      });
    } catch (error) {
      // The channel closed under it (the connection lost): nothing was sent.
      reply.catch(() => undefined);
      this.pendingReplies.get(correlationId)?.(notConnected(error));
      throw notConnected(error);
    }
    return schema.parse(JSON.parse((await reply).toString('utf8')));
  }

  private ensureRpcChannel(): Promise<Channel> {
    const connection = this.currentConnection();
    const opened = (this.rpcChannel ??= (async () => {
      const channel = await connection.createChannel();
      channel.on('error', (error: Error) => this.logger.warn({ err: error }, 'request channel error'));
      channel.on('close', () => {
        if (this.rpcChannel === opened) this.rpcChannel = undefined;
      });
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
    })());
    opened.catch(() => {
      if (this.rpcChannel === opened) this.rpcChannel = undefined;
    });
    return opened;
  }

  /**
   * Messages ready in a queue (its name without the prefix), by a passive check. On a channel of
   * its own: the broker closes the channel of a check that fails, and that must never be the
   * publisher's.
   */
  async messageCount(queue: string): Promise<number> {
    const connection = this.currentConnection();
    const opened = (this.statsChannel ??= connection.createChannel().then((channel) => {
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

  /** Fails while the connection is away or being set up again; /readyz reports it. */
  async ping(): Promise<void> {
    if (!this.ready) throw notConnected();
    await this.currentPublisher().checkExchange(this.name(EXCHANGES.events));
  }

  /** Closes the connection for good: no reconnect after this. */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    const connection = this.connection;
    if (connection !== undefined) this.forget(connection);
    await connection?.close().catch(() => undefined);
  }
}

/** What publishing and requests answer while the connection is away: the caller retries later. */
function notConnected(cause?: unknown): AppError {
  return new AppError('service_unavailable', 'The message broker is not reachable right now; retry shortly.', cause === undefined ? {} : { cause });
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
