import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

const RELEASE_IF_OWNER = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export class LockTimeoutError extends Error {
  override name = 'LockTimeoutError';
}

/** The script as a command of the connection: ioredis sends EVALSHA, and the script text only once per server. */
interface ReleaseCommand {
  pmatchReleaseIfOwner(key: string, token: string): Promise<number>;
}

/**
 * A Redis lock that serialises decisions per bank account so they are good decisions (no "held"
 * caused by two deposits racing). It is not what keeps money safe: locks expire and holders
 * pause, so every write it protects is also a conditional update guarded by the database.
 */
export class RedisLock {
  private readonly redis: Redis & ReleaseCommand;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('pmatchReleaseIfOwner', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
    this.redis = redis as Redis & ReleaseCommand;
  }

  /**
   * Per lock name, when the holders queued in this process so far will all be done. Holders in one
   * process wait for each other here, in arrival order, and take the Redis lock as soon as the one
   * before lets go, instead of polling Redis against each other with a backoff that leaves the
   * lock idle between polls. Only holders in other processes are waited for by polling.
   */
  private readonly queued = new Map<string, Promise<void>>();

  async withLock<T>(name: string, options: { ttlMs: number; waitMs: number }, work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + options.waitMs;
    const before = this.queued.get(name) ?? Promise.resolve();
    let finished!: () => void;
    const mine = new Promise<void>((resolve) => (finished = resolve));
    // The next holder's turn comes when the one before and this one are both done (even if this one gave up waiting).
    const after = Promise.all([before, mine]).then(() => undefined);
    this.queued.set(name, after);
    try {
      await turnOf(before, deadline, name);
      return await this.withRedisLock(name, options, deadline, work);
    } finally {
      finished();
      void after.then(() => {
        if (this.queued.get(name) === after) this.queued.delete(name);
      });
    }
  }

  private async withRedisLock<T>(name: string, options: { ttlMs: number; waitMs: number }, deadline: number, work: () => Promise<T>): Promise<T> {
    const key = `${this.prefix}lock:${name}`;
    const token = randomUUID();
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

/** Waits until the holders queued before are done, or throws LockTimeoutError at the deadline. */
async function turnOf(before: Promise<void>, deadline: number, name: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), Math.max(0, deadline - Date.now()))));
  try {
    if (await Promise.race([before.then(() => false), timedOut])) {
      throw new LockTimeoutError(`lock ${name} not acquired in time: holders in this process were still ahead`);
    }
  } finally {
    clearTimeout(timer);
  }
}
