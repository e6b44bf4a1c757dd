import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import { AppError } from '@pmatch/contracts';
import type { z } from 'zod';
import { DEADLINE_HEADER, notConnected, traceHeaders } from './broker-messages';
import type { Logger } from './logger';

/** RabbitMQ's direct reply-to pseudo queue: replies without declaring a queue per request. */
const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

/**
 * The broker's request/reply: requests over direct reply-to, and replies to others' requests, each
 * on a channel of its own on the current connection (`connection` throws 503 while it is away).
 */
export class RequestReply {
  private rpcChannel: Promise<Channel> | undefined;
  private replyChannel: Promise<ConfirmChannel> | undefined;
  /** Requests waiting for their reply, by correlation id: `settle` with the reply, or with the error that ends the wait. */
  private readonly pendingReplies = new Map<string, (outcome: Buffer | AppError) => void>();

  constructor(
    private readonly connection: () => ChannelModel,
    private readonly name: (base: string) => string,
    private readonly logger: Logger,
  ) {}

  /** The connection was lost: its channels are forgotten, and callers waiting for a reply answered at once. */
  connectionLost(): void {
    this.rpcChannel = undefined;
    this.replyChannel = undefined;
    // Replies come on the lost connection's reply-to: none can come now, so the callers are
    // answered at once rather than at their timeout.
    const lost = new AppError(
      'service_unavailable',
      'The connection to the message broker was lost while waiting for the reply; the request may still complete. Read the object again before retrying.',
    );
    for (const settle of [...this.pendingReplies.values()]) settle(lost);
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
      const created = Promise.resolve().then(() => this.connection().createConfirmChannel());
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
   * Resolves with the reply parsed by `schema`; rejects with 503 `service_unavailable` when none
   * comes in time. The request carries its deadline and a consumer drops it once past
   * (`pastDeadline`), so a retried caller never sees the first attempt carried out as well. No
   * broker `expiration`: quorum queues would dead-letter expired requests, and dead letters are for
   * poison messages, not routine timeouts.
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
    const connection = this.connection();
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
}
