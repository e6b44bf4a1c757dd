import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type GetMessage } from 'amqplib';
import { QUEUES } from '@pmatch/contracts';

/** The queues that have a dead-letter queue (`<queue>.dead`), without the prefix. */
export const DEAD_LETTERED_QUEUES: readonly string[] = Object.values(QUEUES);

/** One dead letter as `list` shows it. */
export interface DeadLetter {
  messageId: string | null;
  /** The routing key it was first published with. */
  routingKey: string | null;
  /** The queue it died in (without the prefix), where a replay puts it back. */
  originalQueue: string;
  /** Times it was dead-lettered, over every death (a replayed letter that dies again counts on). */
  deathCount: number;
  /** Why it died first: `delivery_limit` (failed on every delivery), `rejected` (did not parse), `expired`. */
  reason: string | null;
  firstDeathAt: string | null;
}

export interface DeadLetterQueue {
  /** The dead-letter queue, without the prefix: `<queue>.dead`. */
  queue: string;
  messageCount: number;
  /** Its first messages, oldest first (at most the limit asked for). */
  messages: DeadLetter[];
}

export interface ReplayResult {
  queue: string;
  /** Message ids put back into the original queue, in the order they were moved. */
  replayed: (string | null)[];
}

/** A replay stopped because the original queue did not take a copy; that letter and the rest stay dead. */
export class DeadLetterReplayError extends Error {
  override name = 'DeadLetterReplayError';
}

/** A queue asked for does not exist under this prefix (a wrong prefix, or no service has started yet). */
export class MissingQueueError extends Error {
  override name = 'MissingQueueError';
}

/** AMQP field-table values as amqplib decodes them: a timestamp is `{ '!': 'timestamp', value }` or a number. */
type XDeath = { count?: unknown; reason?: unknown; queue?: unknown; time?: unknown; 'routing-keys'?: unknown };

/**
 * Reads and replays the dead-letter queues of one prefix, on a connection of its own. A read takes
 * letters unacknowledged and hands them back when its channel closes (a read may change which is
 * first). A replay publishes one letter at a time to its original queue and acknowledges it only
 * once the broker confirmed the copy: a letter is never lost, at worst both dead and put back
 * (docs/decisions/0083-dead-letters-replayed-by-the-ops-cli.md).
 */
export class DeadLetters {
  private constructor(
    private readonly connection: ChannelModel,
    private readonly prefix: string,
  ) {}

  static async connect(url: string, prefix: string): Promise<DeadLetters> {
    const connection = await amqp.connect(url, { clientProperties: { connection_name: `${prefix || 'pmatch'}ops-dead-letters` } });
    connection.on('error', () => undefined);
    return new DeadLetters(connection, prefix);
  }

  /** The dead-letter queues of `queues` (all by default), each with its count and its first `limit` letters. */
  async list(options: { queues?: readonly string[]; limit: number }): Promise<DeadLetterQueue[]> {
    const result: DeadLetterQueue[] = [];
    for (const queue of options.queues ?? DEAD_LETTERED_QUEUES) {
      const channel = await this.connection.createChannel();
      channel.on('error', () => undefined);
      try {
        const dead = this.deadQueue(queue);
        const { messageCount } = await checkQueue(channel, dead);
        const messages: DeadLetter[] = [];
        while (messages.length < Math.min(options.limit, messageCount)) {
          const msg = await channel.get(dead, { noAck: false });
          if (msg === false) break;
          messages.push(describe(msg, queue));
        }
        result.push({ queue: `${queue}.dead`, messageCount, messages });
      } finally {
        // Closing the channel hands every letter it holds back, unacknowledged.
        await channel.close().catch(() => undefined);
      }
    }
    return result;
  }

  /**
   * Moves the dead letters of `queues` (all by default) back to their original queue, or only the
   * one with `messageId`. Letters that arrive while it runs wait for the next replay; a letter that
   * is not the one asked for stays where it is.
   */
  async replay(options: { queues?: readonly string[]; messageId?: string }): Promise<ReplayResult[]> {
    const results: ReplayResult[] = [];
    for (const queue of options.queues ?? DEAD_LETTERED_QUEUES) {
      const channel = await this.connection.createConfirmChannel();
      channel.on('error', () => undefined);
      const returned = { count: 0 };
      channel.on('return', () => (returned.count += 1));
      const replayed: (string | null)[] = [];
      try {
        const dead = this.deadQueue(queue);
        const { messageCount } = await checkQueue(channel, dead);
        // The original queue must be there: a copy published to no queue would be confirmed, and lost.
        await checkQueue(channel, this.prefix + queue);
        // At most the letters there were at the start: a letter replayed that dies again at once
        // comes back to this queue, and must not be replayed in a loop.
        for (let seen = 0; seen < messageCount; seen++) {
          const msg = await channel.get(dead, { noAck: false });
          if (msg === false) break;
          const messageId = typeof msg.properties.messageId === 'string' ? msg.properties.messageId : null;
          if (options.messageId !== undefined && messageId !== options.messageId) continue;
          const returnedBefore = returned.count;
          await republish(channel, this.prefix + queue, msg);
          // A copy no queue took comes back before its confirm: the letter stays dead.
          if (returned.count !== returnedBefore)
            throw new DeadLetterReplayError(`${queue} took no copy of message ${messageId ?? '(no id)'}; it stays in ${queue}.dead`);
          channel.ack(msg);
          replayed.push(messageId);
          if (options.messageId !== undefined) break;
        }
        results.push({ queue: `${queue}.dead`, replayed });
      } finally {
        // Letters skipped (not the one asked for) go back to the dead-letter queue unacknowledged.
        await channel.close().catch(() => undefined);
      }
    }
    return results;
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }

  private deadQueue(queue: string): string {
    return `${this.prefix}${queue}.dead`;
  }
}

/** The queue's message count; `MissingQueueError` if there is no such queue (the check closes the channel then). */
async function checkQueue(channel: Channel, queue: string): Promise<{ messageCount: number }> {
  try {
    return await channel.checkQueue(queue);
  } catch (error) {
    if ((error as { code?: unknown }).code === 404)
      throw new MissingQueueError(`no queue ${queue} (check AMQP_PREFIX; the services declare their queues when they start)`);
    throw error;
  }
}

/** Publishes a copy of `msg` straight to `queue` (the default exchange) and waits for the broker's confirm. */
async function republish(channel: ConfirmChannel, queue: string, msg: GetMessage): Promise<void> {
  const { headers = {}, ...properties } = msg.properties;
  // The broker counts deliveries itself; a copied count would make the consumer's backoff start high.
  const { 'x-delivery-count': _deliveries, ...kept } = headers as Record<string, unknown>;
  await new Promise<void>((resolve, reject) => {
    channel.publish('', queue, msg.content, { ...definedOnly(properties), headers: kept, persistent: true, mandatory: true }, (error: unknown) =>
      error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
    );
  });
}

function definedOnly(properties: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== undefined && value !== null));
}

function describe(msg: GetMessage, queue: string): DeadLetter {
  const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
  const deaths = (Array.isArray(headers['x-death']) ? headers['x-death'] : []) as XDeath[];
  // x-death is newest first; the first death is the last entry.
  const first = deaths.at(-1);
  const routingKeys = Array.isArray(first?.['routing-keys']) ? (first['routing-keys'] as unknown[]) : [];
  return {
    messageId: typeof msg.properties.messageId === 'string' ? msg.properties.messageId : null,
    routingKey: typeof routingKeys[0] === 'string' ? routingKeys[0] : null,
    originalQueue: queue,
    deathCount: deaths.reduce((sum, death) => sum + (typeof death.count === 'number' ? death.count : 0), 0),
    reason: typeof headers['x-first-death-reason'] === 'string' ? headers['x-first-death-reason'] : typeof first?.reason === 'string' ? first.reason : null,
    firstDeathAt: timestampOf(first?.time),
  };
}

function timestampOf(value: unknown): string | null {
  const seconds = typeof value === 'number' ? value : typeof value === 'object' && value !== null && 'value' in value ? Number(value.value) : NaN;
  return Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : null;
}
