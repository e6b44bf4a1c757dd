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

/** A Redis lock this process holds: its key, its owner token, and when it was asked for. */
interface HeldLock {
  key: string;
  token: string;
  /** `monotonicNow()` just before the SET: Redis starts the TTL later, so the lock lives at least until this + ttlMs. */
  requestedAt: number;
  ttlMs: number;
}

/**
 * A Redis lock that serialises decisions per bank account so they are good decisions (no "held"
 * caused by two deposits racing). It is not what keeps money safe: locks expire and holders
 * pause, so every write it protects is also a conditional update guarded by the database.
 */
export class RedisLock {
  private readonly redis: Redis & ReleaseCommand;

  /**
   * Per lock name, when the holders queued in this process so far will all be done. Holders in one
   * process wait for each other here, in arrival order; only holders in other processes are waited
   * for by polling Redis.
   */
  private readonly queued = new Map<string, Promise<void>>();

  /** Per lock name, the Redis lock a holder left held for the next holder queued in this process. */
  private readonly handedOver = new Map<string, HeldLock>();

  /**
   * @param monotonicNow milliseconds on a clock that never jumps (tests pass their own), to tell
   *   how long a lock handed from holder to holder has left.
   */
  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly monotonicNow: () => number = () => performance.now(),
  ) {
    redis.defineCommand('pmatchReleaseIfOwner', { numberOfKeys: 1, lua: RELEASE_IF_OWNER });
    this.redis = redis as Redis & ReleaseCommand;
  }

  /**
   * Runs `work` holding the lock. A holder that finishes while another in this process waits hands
   * the lock over rather than releasing it, while at least half its TTL is left; then it releases
   * and the next takes a fresh one. Holders in other processes poll, and get it when this queue is
   * empty or at that renewal (docs/decisions/0007-lock-handed-over-within-a-process.md).
   */
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
      const held = this.takeHandedOver(name) ?? (await this.acquire(name, options, deadline));
      try {
        return await work();
      } finally {
        if (this.queued.get(name) !== after && this.hasHalfItsTtlLeft(held)) this.handedOver.set(name, held);
        else await this.release(held);
      }
    } finally {
      finished();
      void after.then(async () => {
        if (this.queued.get(name) !== after) return;
        this.queued.delete(name);
        // The holders it was handed to gave up waiting before their turn came.
        const unclaimed = this.takeHandedOver(name);
        if (unclaimed !== undefined) await this.release(unclaimed);
      });
    }
  }

  /** The lock the holder before left held: handed over a few microtasks ago, with half its TTL left then. */
  private takeHandedOver(name: string): HeldLock | undefined {
    const held = this.handedOver.get(name);
    this.handedOver.delete(name);
    return held;
  }

  private hasHalfItsTtlLeft(held: HeldLock): boolean {
    return this.monotonicNow() - held.requestedAt < held.ttlMs / 2;
  }

  private async acquire(name: string, options: { ttlMs: number; waitMs: number }, deadline: number): Promise<HeldLock> {
    const key = `${this.prefix}lock:${name}`;
    const token = randomUUID();
    let backoffMs = 2;
    for (;;) {
      const requestedAt = this.monotonicNow();
      if ((await this.redis.set(key, token, 'PX', options.ttlMs, 'NX')) === 'OK') return { key, token, requestedAt, ttlMs: options.ttlMs };
      if (Date.now() >= deadline) throw new LockTimeoutError(`lock ${name} not acquired within ${options.waitMs} ms`);
      // Polling is the price of a plain SET NX lock; the backoff keeps it cheap under contention.
      await new Promise((resolve) => setTimeout(resolve, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 50);
    }
  }

  /** Deletes the key only if it still holds this token: an expired lock may be someone else's now. */
  private async release(held: HeldLock): Promise<void> {
    await this.redis.pmatchReleaseIfOwner(held.key, held.token).catch(() => undefined);
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
