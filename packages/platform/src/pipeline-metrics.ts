import type { Database } from '@pmatch/db';
import { Gauge, type Registry } from 'prom-client';
import type { Broker } from './broker';

/**
 * `pmatch_outbox_oldest_unpublished_age_seconds`, read at each scrape: how long the oldest row not
 * yet confirmed by the broker has waited (0 when none waits). The outbox is shared, so every
 * service with a relay reports the same value. One index probe (outbox_unpublished_idx).
 */
export function registerOutboxAge(registry: Registry, database: Database): void {
  new Gauge({
    name: 'pmatch_outbox_oldest_unpublished_age_seconds',
    help: 'Age of the oldest outbox row not yet published to RabbitMQ (0 when none waits)',
    registers: [registry],
    async collect() {
      await keepLastOnFailure(async () => {
        const [row] = await database.prisma.$queryRaw<{ age: number | null }[]>`
          SELECT extract(epoch FROM now() - created_at)::float8 AS age
          FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT 1`;
        this.set(Math.max(0, row?.age ?? 0));
      });
    },
  });
}

/**
 * `pmatch_dlq_messages{queue}`, read at each scrape: messages in the dead-letter queue of each queue
 * the service consumes (`queues()`, names without the prefix; the label is the broker's name).
 */
export function registerDeadLetterDepth(registry: Registry, broker: Broker, queues: () => readonly string[]): void {
  new Gauge({
    name: 'pmatch_dlq_messages',
    help: 'Messages in the dead-letter queue of each queue this service consumes',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      await keepLastOnFailure(async () => {
        const counts = await Promise.all(queues().map(async (queue) => [broker.name(`${queue}.dead`), await broker.messageCount(`${queue}.dead`)] as const));
        for (const [queue, count] of counts) this.set({ queue }, count);
      });
    },
  });
}

/**
 * `pmatch_broker_connected`, read at each scrape: 1 while the service's RabbitMQ connection is up
 * with its topology and consumers, 0 while it is away or being set up again. orders-api and
 * bank-ingest stay ready without the broker, so this, not /readyz, shows its absence.
 */
export function registerBrokerConnected(registry: Registry, broker: Broker): void {
  new Gauge({
    name: 'pmatch_broker_connected',
    help: "1 while this process's RabbitMQ connection is up, 0 while it reconnects",
    registers: [registry],
    collect() {
      this.set(broker.connected ? 1 : 0);
    },
  });
}

/**
 * Runs a gauge's read for a scrape. A failed read (the database or the broker away) leaves the
 * last value in place rather than failing the whole scrape: /readyz and the other metrics still
 * tell what is wrong.
 */
export async function keepLastOnFailure(read: () => Promise<void>): Promise<void> {
  try {
    await read();
  } catch {
    // The dependency's outage shows in /readyz; the gauge keeps its last value until it is back.
  }
}
