import { REDIS_URL, uniqueName } from '@pmatch/testkit';
import { Redis } from 'ioredis';
import { LockTimeoutError, RateLimiter, RedisLock, SecretBox, newSigningSecret } from '../src';

describe('RedisLock', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(() => redis.disconnect());

  test('when many holders want one lock, then they run one at a time', async () => {
    const lock = new RedisLock(redis, uniqueName('pmatch-test:'));
    let inside = 0;
    let maxInside = 0;

    await Promise.all(Array.from({ length: 10 }, () => lock.withLock('account:a', { ttlMs: 5_000, waitMs: 10_000 }, async () => {
      inside++;
      maxInside = Math.max(maxInside, inside);
      await new Promise((resolve) => setImmediate(resolve));
      inside--;
    })));

    expect(maxInside).toBe(1);
  });

  test('when the lock is held past the wait, then LockTimeoutError', async () => {
    const prefix = uniqueName('pmatch-test:');
    await redis.set(`${prefix}lock:account:b`, 'someone-else', 'PX', 10_000);

    await expect(new RedisLock(redis, prefix).withLock('account:b', { ttlMs: 1_000, waitMs: 100 }, async () => 1)).rejects.toBeInstanceOf(LockTimeoutError);
  });

  test('when a lock expired and another holder took it, then the first holder does not release the new holder', async () => {
    const prefix = uniqueName('pmatch-test:');
    const lock = new RedisLock(redis, prefix);

    await lock.withLock('account:c', { ttlMs: 5_000, waitMs: 1_000 }, async () => {
      await redis.set(`${prefix}lock:account:c`, 'new-holder', 'PX', 10_000);
    });

    expect(await redis.get(`${prefix}lock:account:c`)).toBe('new-holder');
  });

  test('when Redis has forgotten its scripts (as after a restart), then the lock is still released', async () => {
    const prefix = uniqueName('pmatch-test:');
    const lock = new RedisLock(redis, prefix);
    await lock.withLock('account:d', { ttlMs: 5_000, waitMs: 1_000 }, async () => undefined);
    await redis.script('FLUSH');

    await lock.withLock('account:d', { ttlMs: 5_000, waitMs: 1_000 }, async () => {
      expect(await redis.exists(`${prefix}lock:account:d`)).toBe(1);
    });

    expect(await redis.exists(`${prefix}lock:account:d`)).toBe(0);
  });
});

describe('RateLimiter', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(() => redis.disconnect());

  test('when a key takes more than its burst at once, then the next is refused with the wait until a token, and other keys are unaffected', async () => {
    // One token per 100 s after the burst of 3: however slow the machine, none refills during the test.
    const limiter = new RateLimiter(redis, uniqueName('pmatch-test:'), 0.01, 3);

    const decisions = [];
    for (let i = 0; i < 4; i += 1) decisions.push(await limiter.take('key_a'));

    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    // The next token is at most 100 s away, and more than 90 s unless the machine stalled that long.
    expect(decisions[3]!.retryAfterMs).toBeGreaterThan(90_000);
    expect(decisions[3]!.retryAfterMs).toBeLessThanOrEqual(100_000);
    expect((await limiter.take('key_b')).allowed).toBe(true);
  });

  test('when Redis has forgotten its scripts (as after a restart), then the bucket still counts', async () => {
    // One token per 100 s: however slow the machine, no second token comes during the test.
    const limiter = new RateLimiter(redis, uniqueName('pmatch-test:'), 0.01, 1);
    expect((await limiter.take('key_c')).allowed).toBe(true);
    await redis.script('FLUSH');

    expect((await limiter.take('key_c')).allowed).toBe(false);
  });
});

describe('SecretBox', () => {
  test('when a secret is sealed, then the stored text does not contain it and opens back to it', () => {
    const box = new SecretBox('a-key-of-sixteen-chars');
    const secret = newSigningSecret();

    const sealed = box.seal(secret);

    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed)).toBe(secret);
    expect(box.seal(secret)).not.toBe(sealed);
  });

  test('when sealed text is tampered with or opened with another key, then opening fails', () => {
    const sealed = new SecretBox('a-key-of-sixteen-chars').seal('whsec_x');
    const parts = sealed.split('.');
    const tampered = [...parts.slice(0, 3), Buffer.from('other').toString('base64url')].join('.');

    expect(() => new SecretBox('a-key-of-sixteen-chars').open(tampered)).toThrow();
    expect(() => new SecretBox('another-key-sixteen').open(sealed)).toThrow();
  });
});
