import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { QUEUES } from '@pmatch/contracts';
import { RABBITMQ_URL, REDIS_URL, REPO_ROOT, waitFor, type TestSystem } from '@pmatch/testkit';

/**
 * Breaking the machine's shared infrastructure on purpose, and making sure it is whole again.
 * RabbitMQ and Redis are the machine's own servers, used by every test run here: a fault suite run
 * must be the only test run on the machine (docs/RELIABILITY.md).
 */

const execFileAsync = promisify(execFile);

async function run(command: string, args: string[], timeoutMs: number, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await execFileAsync(command, args, { timeout: timeoutMs, env: { ...process.env, ...env } });
  return stdout;
}

/** `bash scripts/ensure-infra.sh`: starts whichever of PostgreSQL, RabbitMQ and Redis is down, with the machine's own commands. */
export async function ensureInfrastructure(): Promise<void> {
  await run('bash', [join(REPO_ROOT, 'scripts', 'ensure-infra.sh')], 150_000, {
    RABBITMQ_URL,
    REDIS_URL,
    INFRA_WAIT_SECONDS: '60',
  });
}

function redisAddress(): { host: string; port: string } {
  const url = new URL(REDIS_URL);
  return { host: url.hostname || '127.0.0.1', port: url.port || '6379' };
}

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
 * Restarts Redis, which keeps nothing on disk here (`--save ""`): every lock and rate-limit bucket
 * is gone. Whatever happens, Redis is running again when this resolves or rejects.
 */
export async function restartRedis(): Promise<void> {
  const { host, port } = redisAddress();
  try {
    // The server closes the connection as it goes; redis-cli may say so and exit non-zero.
    await run('redis-cli', ['-h', host, '-p', port, 'shutdown', 'nosave'], 15_000).catch(() => undefined);
    await waitFor(async () => ((await redisAnswers()) ? undefined : true), { timeoutMs: 15_000, what: 'Redis to go down' });
  } finally {
    await ensureInfrastructure();
    await waitFor(async () => ((await redisAnswers()) ? true : undefined), { timeoutMs: 30_000, what: 'Redis to answer again' });
  }
}

/**
 * Stops the RabbitMQ application (the Erlang node stays, so it comes back in seconds with its
 * durable queues), runs `whileDown`, and starts it again: in a finally, so the broker is up again
 * whatever happened. Every AMQP connection on the machine is closed by this.
 */
export async function withRabbitMqStopped(whileDown: () => Promise<void>): Promise<void> {
  try {
    await run('rabbitmqctl', ['-q', 'stop_app'], 60_000);
    await whileDown();
  } finally {
    await startRabbitMq();
  }
}

/** `rabbitmqctl start_app` (a no-op when it runs), then waits until it takes connections. */
export async function startRabbitMq(): Promise<void> {
  await run('rabbitmqctl', ['-q', 'start_app'], 120_000).catch(async (error: unknown) => {
    // The node itself is gone (not just the application): start it as the machine does.
    await ensureInfrastructure().catch(() => undefined);
    if (!(await rabbitMqAnswers())) throw error;
  });
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
  const rows = await system.sql<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
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
  const listed = await run('rabbitmqctl', ['-q', 'list_queues', '--no-table-headers', 'name', 'messages_ready', 'messages_unacknowledged'], 30_000).catch(
    () => undefined,
  );
  const depths: Record<string, { ready: number; unacked: number }> = {};
  if (listed !== undefined) {
    for (const line of listed.split('\n')) {
      const [name, ready, unacked] = line.trim().split(/\s+/);
      if (name !== undefined && names.includes(name)) depths[name] = { ready: Number(ready), unacked: Number(unacked) };
    }
    if (names.every((n) => n in depths)) return depths;
  }
  // Without rabbitmqctl: checkQueue counts ready messages only.
  const connection = await amqp.connect(RABBITMQ_URL);
  try {
    const channel = await connection.createChannel();
    for (const name of names) depths[name] = { ready: (await channel.checkQueue(name)).messageCount, unacked: 0 };
  } finally {
    await connection.close();
  }
  return depths;
}
