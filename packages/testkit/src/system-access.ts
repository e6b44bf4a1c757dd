import amqp from 'amqplib';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { Broker, createLogger } from '@pmatch/platform';
import { RABBITMQ_URL, REDIS_URL } from './infra';

/** What a test system's infrastructure is read and cleaned through: its database, queues and Redis keys. */

export interface SqlSession {
  query<T extends Record<string, unknown> = Record<string, any>>(text: string, values?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** One query on a connection of its own. */
export async function queryOnce<T extends Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * One connection kept open for many reads. Callers may read concurrently (fuzzers run several
 * endpoints at once); one connection runs one query at a time, so each waits for the one before
 * it instead of relying on pg's queue, which is deprecated.
 */
export async function openSqlSession(url: string): Promise<SqlSession> {
  const client = new Client({ connectionString: url });
  await client.connect();
  let previous: Promise<unknown> = Promise.resolve();
  return {
    query: <T extends Record<string, unknown>>(text: string, values: unknown[] = []) => {
      const rows = previous.then(async () => (await client.query<T>(text, values)).rows);
      previous = rows.catch(() => undefined);
      return rows;
    },
    close: async () => {
      await previous;
      await client.end();
    },
  };
}

/** A queue's messages ready and its consumers (its full name, prefix included). */
export async function queueStateOf(queue: string): Promise<{ ready: number; consumers: number }> {
  const connection = await amqp.connect(RABBITMQ_URL);
  try {
    const channel = await connection.createChannel();
    const { messageCount, consumerCount } = await channel.checkQueue(queue);
    return { ready: messageCount, consumers: consumerCount };
  } finally {
    await connection.close();
  }
}

/** Deletes the exchanges and queues declared under an AMQP name prefix. */
export async function cleanUpBroker(prefix: string): Promise<void> {
  const broker = await Broker.connect(RABBITMQ_URL, prefix, createLogger('test-cleanup', 'silent'));
  try {
    await broker.deleteTopology();
  } finally {
    await broker.close();
  }
}

/** Deletes the Redis keys under a prefix. */
export async function cleanUpRedis(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
