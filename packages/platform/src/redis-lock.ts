import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

const RELEASE_IF_OWNER = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export class LockTimeoutError extends Error {
  override name = 'LockTimeoutError';
}

/**
 * A Redis lock that serialises decisions per bank account so they are good decisions (no "held"
 * caused by two deposits racing). It is not what keeps money safe: locks expire and holders
 * pause, so every write it protects is also a conditional update guarded by the database.
 */
/** The script as a command of the connection: ioredis sends EVALSHA, and the script text only once per server. */
interface ReleaseCommand {
  pmatchReleaseIfOwner(key: string, token: string): Promise<number>;
}

export class RedisLock {
  private readonly redis: Redis & ReleaseCommand;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('pmatchReleaseIfOwner', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
    this.redis = redis as Redis & ReleaseCommand;
  }

  async withLock<T>(name: string, options: { ttlMs: number; waitMs: number }, work: () => Promise<T>): Promise<T> {
    const key = `${this.prefix}lock:${name}`;
    const token = randomUUID();
    const deadline = Date.now() + options.waitMs;
    let backoffMs = 2;
    while ((await this.redis.set(key, token, 'PX', options.ttlMs, 'NX')) !== 'OK') {
      if (Date.now() >= deadline) throw new LockTimeoutError(`lock ${name} not acquired within ${options.waitMs} ms`);
      // Polling is the price of a plain SET NX lock; the backoff keeps it cheap under contention.
      await new Promise((resolve) => setTimeout(resolve, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 50);
    }
    try {
      return await work();
    } finally {
      await this.redis.pmatchReleaseIfOwner(key, token).catch(() => undefined);
    }
  }
}
