import { once } from 'node:events';
import { Redis } from 'ioredis';
import { REDIS_URL, freePort, uniqueName } from '@pmatch/testkit';
import { RateLimiter } from '../src';

/**
 * What the rate limiter decides in the process itself: refusals it remembers (no Redis call until
 * their Retry-After), and the whole limit while Redis does not answer. Time in the process moves
 * only through the limiter's injected clock.
 */

/** A client as services make one for rate limits (`RedisUse` 'best-effort'): a command fails at once while disconnected. */
const bestEffort = (url: string) => new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });

describe('RateLimiter in the process', () => {
  let nowMs = 0;
  const clock = () => nowMs;
  beforeEach(() => {
    nowMs = 1_000;
  });

  test('when a key is refused, then further takes within its Retry-After are refused by the process without asking Redis', async () => {
    const redis = bestEffort(REDIS_URL);
    await redis.connect();
    try {
      const limiter = new RateLimiter(redis, uniqueName('pmatch-test:'), 0.01, 1, { nowMs: clock });
      expect(await limiter.take('k')).toMatchObject({ allowed: true, decidedBy: 'redis' });
      const refused = await limiter.take('k');
      expect(refused).toMatchObject({ allowed: false, decidedBy: 'redis' });
      expect(limiter.refusedForMs('k')).toBe(refused.retryAfterMs);

      // Redis is gone now: an answer for 'k' can only come from the process.
      redis.disconnect();
      nowMs += 5_000;
      expect(await limiter.take('k')).toEqual({ allowed: false, retryAfterMs: refused.retryAfterMs - 5_000, decidedBy: 'process' });
      expect(limiter.refusedForMs('other')).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  test('when Redis does not answer, then each key keeps its rate and burst in the process, and the change is told once each way', async () => {
    const redis = bestEffort(`redis://127.0.0.1:${await freePort()}`);
    const changes: boolean[] = [];
    try {
      const limiter = new RateLimiter(redis, uniqueName('pmatch-test:'), 2, 3, { nowMs: clock, onRedisChange: (answering) => changes.push(answering) });
      const burst = [];
      for (let i = 0; i < 4; i += 1) burst.push(await limiter.take('a'));
      expect(burst.map((d) => [d.allowed, d.decidedBy])).toEqual([
        [true, 'process'],
        [true, 'process'],
        [true, 'process'],
        [false, 'process'],
      ]);
      expect(burst[3]!.retryAfterMs).toBe(500);
      // Another key has its own bucket.
      expect((await limiter.take('b')).allowed).toBe(true);
      // Refilled at 2 a second: half a second later, one more, and then none.
      nowMs += 500;
      expect((await limiter.take('a')).allowed).toBe(true);
      expect((await limiter.take('a')).allowed).toBe(false);
      expect(changes).toEqual([false]);
    } finally {
      redis.disconnect();
    }
  });

  test('when answers already sent are spent, then the process refuses the key from the next request on, without waiting for Redis, and counts each once while Redis is away', async () => {
    const redis = bestEffort(`redis://127.0.0.1:${await freePort()}`);
    try {
      const limiter = new RateLimiter(redis, uniqueName('pmatch-test:'), 1, 2, { nowMs: clock });
      limiter.spend('a');
      expect(limiter.refusedForMs('a')).toBe(0);
      // The bucket of 2 is empty: the next request would find no token.
      limiter.spend('a');
      expect(limiter.refusedForMs('a')).toBe(1_000);
      // Redis's failures come later: they must not spend the process's bucket a second time.
      await new Promise((resolve) => setImmediate(resolve));
      nowMs += 1_000;
      expect(limiter.refusedForMs('a')).toBe(0);
      expect((await limiter.take('a')).allowed).toBe(true);
    } finally {
      redis.disconnect();
    }
  });

  test('when Redis answers again, then the limit is shared through it again and the change is told', async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    const changes: boolean[] = [];
    try {
      await once(redis, 'ready');
      const limiter = new RateLimiter(redis, uniqueName('pmatch-test:'), 1_000, 1_000, { nowMs: clock, onRedisChange: (answering) => changes.push(answering) });
      expect((await limiter.take('k')).decidedBy).toBe('redis');
      const ended = once(redis, 'end');
      redis.disconnect();
      await ended;
      expect((await limiter.take('k')).decidedBy).toBe('process');
      await redis.connect();
      expect((await limiter.take('k')).decidedBy).toBe('redis');
      expect(changes).toEqual([false, true]);
    } finally {
      redis.disconnect();
    }
  });
});
