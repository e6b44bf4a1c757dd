import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { QUEUES } from '@pmatch/contracts';
import { RABBITMQ_URL, REDIS_URL, waitFor, type TestSystem } from '@pmatch/testkit';
import { fromEnvironment, rabbitmqctl, startRedis, stopRedis } from './servers';

/**
 * Breaking the suite's infrastructure on purpose, and making sure it is whole again. RabbitMQ and
 * Redis here are the suite's own servers (support/servers.js, started by its global setup), never
 * the machine's shared ones; PostgreSQL is the machine's, and only the system's own database has its
 * connections cut.
 */

const servers = fromEnvironment();

async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * Restarts Redis, which keeps nothing on disk (`--save ""`): every lock and rate-limit bucket is
 * gone. Whatever happens, Redis is running again when this resolves or rejects.
 */
export async function restartRedis(): Promise<void> {
  try {
    await stopRedis(servers);
    await waitFor(async () => ((await redisAnswers()) ? undefined : true), { timeoutMs: 15_000, what: 'Redis to go down' });
  } finally {
    await startRedis(servers);
    await waitFor(async () => ((await redisAnswers()) ? true : undefined), { timeoutMs: 30_000, what: 'Redis to answer again' });
  }
}

/**
 * Stops the RabbitMQ application (the Erlang node stays, so it comes back in seconds with its
 * durable queues), runs `whileDown`, and starts it again: in a finally, so the broker is up again
 * whatever happened. Every AMQP connection to it is closed by this.
 */
export async function withRabbitMqStopped(whileDown: () => Promise<void>): Promise<void> {
  try {
    await rabbitmqctl(servers, ['stop_app'], 60_000);
    await whileDown();
  } finally {
    await startRabbitMq();
  }
}

/** `rabbitmqctl start_app` (a no-op when it runs), then waits until it takes connections. */
export async function startRabbitMq(): Promise<void> {
  await rabbitmqctl(servers, ['start_app'], 120_000);
  await waitFor(async () => ((await rabbitMqAnswers()) ? true : undefined), { timeoutMs: 60_000, what: 'RabbitMQ to take connections' });
}

async function rabbitMqAnswers(): Promise<boolean> {
  try {
    const connection = await amqp.connect(RABBITMQ_URL, { timeout: 2_000 });
    await connection.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends every PostgreSQL connection to the system's database but the one asking (as an operator's
 * pg_terminate_backend or a failover would); resolves with how many it ended.
 */
export async function cutDatabaseConnections(system: TestSystem): Promise<number> {
  const rows = await system.sql<{ ended: number }>(
    `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS ended
     FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return rows[0]!.ended;
}

/** How many connections the services hold to the system's database now. */
export async function databaseConnections(system: TestSystem): Promise<number> {
  const rows = await system.sql<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return rows[0]!.n;
}

/** Messages waiting in the prefix's queues, dead-letter queues included: a cheap reading (no unacknowledged ones) for polling. */
export async function readyMessages(prefix: string): Promise<number> {
  const names = Object.values(QUEUES).flatMap((q) => [`${prefix}${q}`, `${prefix}${q}.dead`]);
  const connection = await amqp.connect(RABBITMQ_URL);
  try {
    const channel = await connection.createChannel();
    let total = 0;
    for (const name of names) total += (await channel.checkQueue(name)).messageCount;
    return total;
  } finally {
    await connection.close();
  }
}

/** Ready and unacknowledged messages of every queue of one AMQP prefix, dead-letter queues included. */
export async function queueDepths(prefix: string): Promise<Record<string, { ready: number; unacked: number }>> {
  const names = Object.values(QUEUES).flatMap((q) => [`${prefix}${q}`, `${prefix}${q}.dead`]);
  const listed = await rabbitmqctl(servers, ['list_queues', '--no-table-headers', 'name', 'messages_ready', 'messages_unacknowledged'], 30_000);
  const depths: Record<string, { ready: number; unacked: number }> = {};
  for (const line of listed.split('\n')) {
    const [name, ready, unacked] = line.trim().split(/\s+/);
    if (name !== undefined && names.includes(name)) depths[name] = { ready: Number(ready), unacked: Number(unacked) };
  }
  for (const name of names) depths[name] ??= { ready: 0, unacked: 0 };
  return depths;
}
