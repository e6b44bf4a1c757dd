import type { Channel, ChannelModel } from 'amqplib';
import { EXCHANGES, QUEUES, ROUTING_KEYS } from '@pmatch/contracts';

/** Deliveries after which a message that keeps failing is dead-lettered instead of retried. */
export const DELIVERY_LIMIT = 5;

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
const ALL_QUEUES = [...BINDINGS.map((b) => b.queue), ...COMMAND_QUEUES];

/** Names of everything `prefix` declares: each queue with its dead-letter queue, and the exchanges. */
export function topologyNames(prefix: string): { queues: string[]; exchanges: string[] } {
  return {
    queues: ALL_QUEUES.flatMap((q) => [`${prefix}${q}`, `${prefix}${q}.dead`]),
    exchanges: Object.values(EXCHANGES).map((e) => `${prefix}${e}`),
  };
}

/** Declares the whole topology under `prefix` (exchanges, quorum queues, dead-letter queues, bindings); idempotent. */
export async function assertTopology(channel: Channel, prefix: string): Promise<void> {
  const name = (base: string) => `${prefix}${base}`;
  await channel.assertExchange(name(EXCHANGES.bank), 'topic', { durable: true });
  await channel.assertExchange(name(EXCHANGES.events), 'topic', { durable: true });
  await channel.assertExchange(name(EXCHANGES.deadLetter), 'direct', { durable: true });
  for (const queue of ALL_QUEUES) {
    await channel.assertQueue(name(`${queue}.dead`), { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await channel.bindQueue(name(`${queue}.dead`), name(EXCHANGES.deadLetter), queue);
    await channel.assertQueue(name(queue), {
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-delivery-limit': DELIVERY_LIMIT,
        'x-dead-letter-exchange': name(EXCHANGES.deadLetter),
        'x-dead-letter-routing-key': queue,
      },
    });
  }
  for (const b of BINDINGS) await channel.bindQueue(name(b.queue), name(b.exchange), b.routingKey);
}

/**
 * Checks passively (no rights needed) that every exchange and queue of `prefix` exists, and
 * declares the topology on `channel` only if something is missing, which only a user with
 * configure rights may. A service's own user has none: it then fails naming the step that declares it.
 */
export async function ensureTopology(connection: ChannelModel, channel: Channel, prefix: string): Promise<void> {
  if (await topologyPresent(connection, prefix)) return;
  try {
    await assertTopology(channel, prefix);
  } catch (error) {
    const refused = /ACCESS_REFUSED|403/.test(error instanceof Error ? error.message : String(error));
    if (!refused) throw error;
    throw new Error(
      `the RabbitMQ topology (AMQP_PREFIX "${prefix}") is missing and this broker user may not declare it: ` +
        'run the migrate step (scripts/migrate.mjs with the topology user in RABBITMQ_URL) first',
      { cause: error },
    );
  }
}

/** Whether every exchange and queue exists, by passive checks on a channel of their own (a failed check closes it). */
async function topologyPresent(connection: ChannelModel, prefix: string): Promise<boolean> {
  const { queues, exchanges } = topologyNames(prefix);
  const channel = await connection.createChannel();
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
