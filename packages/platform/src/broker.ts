import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import { EXCHANGES } from '@pmatch/contracts';
import { TRACEPARENT_HEADER, continueTrace, runInTrace } from '@pmatch/db';
import type { z } from 'zod';
import { DEFAULT_RETRY_BACKOFF_MS, handleMessage } from './broker-consumer';
import { notConnected, traceHeaders, type Handler } from './broker-messages';
import { RequestReply } from './broker-requests';
import { assertTopology, ensureTopology, topologyNames } from './broker-topology';
import type { Logger } from './logger';

export { DEADLINE_HEADER, pastDeadline, type Delivery, type Handler } from './broker-messages';
export { DELIVERY_LIMIT, type QueueBinding } from './broker-topology';
export { DEFAULT_RETRY_BACKOFF_MS } from './broker-consumer';

/** Reconnect attempts wait this long at first, doubling (with ±25 % jitter) up to the maximum. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 10_000;
/** A consumer whose channel alone closed (the connection still up) is started again after this. */
const CONSUMER_RESTART_MS = 1_000;

export interface BrokerOptions {
  /**
   * When RabbitMQ cannot be reached at all at start (the connection refused, no route, a timeout),
   * resolve anyway and connect in the background as after a lost connection. A broker that answers
   * and refuses (a wrong user, a missing topology) still rejects: that is no outage to wait out.
   */
  startWithoutBroker?: boolean;
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
  private statsChannel: Promise<Channel> | undefined;
  private readonly requests: RequestReply;
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
  ) {
    this.requests = new RequestReply(
      () => this.currentConnection(),
      (base) => this.name(base),
      logger,
    );
  }

  /**
   * Connects and declares the topology; rejects if that fails, unless `startWithoutBroker` and
   * RabbitMQ is unreachable (then it goes on trying: `connected` tells when it is there).
   */
  static async connect(url: string, prefix: string, logger: Logger, options: BrokerOptions = {}): Promise<Broker> {
    const broker = new Broker(url, prefix, logger, options);
    try {
      await broker.open();
    } catch (error) {
      if (!(options.startWithoutBroker === true && unreachable(error))) throw error;
      logger.error({ err: error }, 'RabbitMQ unreachable at start; starting without it and connecting in the background');
      broker.scheduleReconnect(RECONNECT_FIRST_MS);
    }
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
      await ensureTopology(connection, publisher, this.prefix);
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
    this.statsChannel = undefined;
    this.requests.connectionLost();
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
    const connection = await amqp.connect(url, { clientProperties: { connection_name: `${prefix || 'pmatch'} topology` } });
    try {
      await assertTopology(await connection.createConfirmChannel(), prefix);
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  name(base: string): string {
    return `${this.prefix}${base}`;
  }

  /** Names of everything this prefix declared, for tests that clean up after themselves. */
  topologyNames(): { queues: string[]; exchanges: string[] } {
    return topologyNames(this.prefix);
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
          const work = runInTrace(trace, () => handleMessage(channel, queue, msg, schema, handler, { backoffMs, stopping: stopping.signal }, this.logger));
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
    // While the connection is away (or still being opened), the next connection starts it with the others.
    if (this.ready) await consumer.start(this.currentConnection());
    this.consumers.add(consumer);
    return () => consumer.stop();
  }

  /** Sends a reply to a request's reply address (default exchange, direct reply-to name). */
  reply(replyTo: string, correlationId: string, body: unknown): Promise<void> {
    return this.requests.reply(replyTo, correlationId, body);
  }

  /** Request/reply over direct reply-to: the reply parsed by `schema`, or 503 when none comes in time. */
  request<S extends z.ZodType>(queue: string, body: unknown, schema: S, timeoutMs: number): Promise<z.infer<S>> {
    return this.requests.request(queue, body, schema, timeoutMs);
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

  /**
   * Removes from `queue`'s dead-letter queue (its name without the prefix) the letters `harmless`
   * says need no one, looking at the `limit` oldest at most; every other letter stays, in its
   * place. On a channel of its own, whose close hands back what was not removed: a letter is
   * removed only by its acknowledgement, after `harmless` answered true for its parsed body.
   */
  async discardDeadLetters(queue: string, harmless: (body: unknown) => Promise<boolean>, limit: number): Promise<number> {
    const channel = await this.currentConnection().createChannel();
    // A refused or missing queue closes this channel only.
    channel.on('error', () => undefined);
    let removed = 0;
    try {
      const dead = this.name(`${queue}.dead`);
      const { messageCount } = await channel.checkQueue(dead);
      for (let seen = 0; seen < Math.min(messageCount, limit); seen++) {
        const msg = await channel.get(dead, { noAck: false });
        if (msg === false) break;
        let body: unknown;
        try {
          body = JSON.parse(msg.content.toString('utf8'));
        } catch {
          continue;
        }
        if (await harmless(body)) {
          channel.ack(msg);
          removed += 1;
        }
      }
    } finally {
      await channel.close().catch(() => undefined);
    }
    return removed;
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

/** Errors of a broker that could not be reached at all, as opposed to one that answered and refused. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT']);

function unreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
  // A socket closed before the AMQP handshake finished (a proxy or load balancer with no broker behind it).
  return error instanceof Error && /Socket closed abruptly|socket hang up/i.test(error.message);
}
