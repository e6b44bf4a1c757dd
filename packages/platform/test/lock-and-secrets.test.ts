import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { REDIS_URL, uniqueName } from '@pmatch/testkit';
import { Redis } from 'ioredis';
import { LockTimeoutError, RateLimiter, RedisLock, SecretBox, SecretNotOpened, newSigningSecret } from '../src';

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

    await Promise.all(
      Array.from({ length: 10 }, () =>
        lock.withLock('account:a', { ttlMs: 5_000, waitMs: 10_000 }, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await new Promise((resolve) => setImmediate(resolve));
          inside--;
        }),
      ),
    );

    expect(maxInside).toBe(1);
  });

  test('when holders in two processes want one lock, then they run one at a time', async () => {
    const prefix = uniqueName('pmatch-test:');
    // Two RedisLock instances on two connections: what two matcher processes are to each other.
    const other = new Redis(REDIS_URL);
    const locks = [new RedisLock(redis, prefix), new RedisLock(other, prefix)];
    let inside = 0;
    let maxInside = 0;
    let runs = 0;

    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        locks[i % 2]!.withLock('account:x', { ttlMs: 5_000, waitMs: 10_000 }, async () => {
          inside++;
          runs++;
          maxInside = Math.max(maxInside, inside);
          await new Promise((resolve) => setTimeout(resolve, 1));
          inside--;
        }),
      ),
    );
    other.disconnect();

    expect([maxInside, runs]).toEqual([1, 10]);
  });

  /** The real connection, counting the lock's SET NX attempts and releases. */
  function counting(connection: Redis): { redis: Redis; calls: { set: number; release: number } } {
    const calls = { set: 0, release: 0 };
    const counted = new Proxy(connection, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (property === 'set') return (...args: unknown[]) => ((calls.set += 1), value.apply(target, args));
        if (property === 'pmatchReleaseIfOwner') return (...args: unknown[]) => ((calls.release += 1), value.apply(target, args));
        return value.bind(target);
      },
    });
    return { redis: counted, calls };
  }

  test('when holders in one process queue for a lock, then they run in arrival order on one Redis lock, handed from each to the next', async () => {
    const { redis: counted, calls } = counting(redis);
    const prefix = uniqueName('pmatch-test:');
    const lock = new RedisLock(counted, prefix);
    const order: number[] = [];

    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        lock.withLock('account:q', { ttlMs: 5_000, waitMs: 10_000 }, async () => {
          order.push(i);
          expect(await redis.exists(`${prefix}lock:account:q`)).toBe(1);
        }),
      ),
    );

    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(calls).toEqual({ set: 1, release: 1 });
    expect(await redis.exists(`${prefix}lock:account:q`)).toBe(0);
  });

  test('when a lock has been held for half its TTL, then the holder releases it and the next one takes a fresh lock', async () => {
    const { redis: counted, calls } = counting(redis);
    let now = 0;
    const lock = new RedisLock(counted, uniqueName('pmatch-test:'), () => now);
    const ttlMs = 1_000;

    await Promise.all([
      lock.withLock('account:h', { ttlMs, waitMs: 10_000 }, async () => void (now += ttlMs / 2 - 1)),
      lock.withLock('account:h', { ttlMs, waitMs: 10_000 }, async () => void (now += 1)),
      lock.withLock('account:h', { ttlMs, waitMs: 10_000 }, async () => undefined),
    ]);

    // The first hands over with a hair of half its TTL left; the second finds half of it gone and
    // releases; the third takes a lock of its own and releases it, having nobody after it.
    expect(calls).toEqual({ set: 2, release: 2 });
  });

  test('when the holders a lock was handed to all gave up waiting, then it is released for other processes', async () => {
    const prefix = uniqueName('pmatch-test:');
    const other = new Redis(REDIS_URL);
    const lock = new RedisLock(redis, prefix);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));

    // A TTL far beyond the other process's wait: only a release lets it in.
    const first = lock.withLock('account:g', { ttlMs: 60_000, waitMs: 1_000 }, () => gate);
    const second = lock.withLock('account:g', { ttlMs: 60_000, waitMs: 20 }, async () => undefined);
    await expect(second).rejects.toBeInstanceOf(LockTimeoutError);
    open();
    await first;

    try {
      await expect(new RedisLock(other, prefix).withLock('account:g', { ttlMs: 1_000, waitMs: 5_000 }, async () => 'in')).resolves.toBe('in');
    } finally {
      other.disconnect();
    }
  });

  test('when a holder in this process keeps the lock past the wait of the next, then that one gets LockTimeoutError and the one after it still runs in turn', async () => {
    const lock = new RedisLock(redis, uniqueName('pmatch-test:'));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const ran: string[] = [];

    const first = lock.withLock('account:t', { ttlMs: 5_000, waitMs: 1_000 }, async () => {
      await gate;
      ran.push('first');
    });
    const second = lock.withLock('account:t', { ttlMs: 5_000, waitMs: 20 }, async () => void ran.push('second'));
    const third = lock.withLock('account:t', { ttlMs: 5_000, waitMs: 10_000 }, async () => void ran.push('third'));

    await expect(second).rejects.toBeInstanceOf(LockTimeoutError);
    expect(ran).toEqual([]);
    open();
    await Promise.all([first, third]);
    expect(ran).toEqual(['first', 'third']);
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
  const endpoint = { kind: 'webhook_endpoint', id: 'we_1' } as const;

  test('when a secret is sealed, then the stored text does not contain it and opens back to it for its row', () => {
    const box = new SecretBox('a-key-of-sixteen-chars');
    const secret = newSigningSecret();

    const sealed = box.seal(secret, endpoint);

    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(sealed).toMatch(/^v2\.[A-Za-z0-9_-]{8}\./);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed, endpoint)).toBe(secret);
    expect(box.seal(secret, endpoint)).not.toBe(sealed);
  });

  test('when sealed text is tampered with, opened with another key, or its tag is cut short, then opening fails with SecretNotOpened', () => {
    const sealed = new SecretBox('a-key-of-sixteen-chars').seal('whsec_x', endpoint);
    const parts = sealed.split('.');
    const tampered = [...parts.slice(0, 4), Buffer.from('other').toString('base64url')].join('.');
    const shortTag = [...parts.slice(0, 3), parts[3]!.slice(0, 6), parts[4]].join('.');

    expect(() => new SecretBox('a-key-of-sixteen-chars').open(tampered, endpoint)).toThrow(SecretNotOpened);
    expect(() => new SecretBox('a-key-of-sixteen-chars').open(shortTag, endpoint)).toThrow(SecretNotOpened);
    expect(() => new SecretBox('another-key-sixteen').open(sealed, endpoint)).toThrow(SecretNotOpened);
  });

  test('when a sealed secret is opened for another row or another kind of row, then it does not open, and the error names no secret', () => {
    const box = new SecretBox('a-key-of-sixteen-chars');
    const sealed = box.seal('whsec_the-secret', { kind: 'bank_adapter', id: 'adp_1' });

    const attempts = [
      { kind: 'bank_adapter', id: 'adp_2' },
      { kind: 'webhook_endpoint', id: 'adp_1' },
      { kind: 'user_totp', id: 'adp_1' },
    ] as const;

    for (const owner of attempts) {
      expect(() => box.open(sealed, owner)).toThrow(SecretNotOpened);
      try {
        box.open(sealed, owner);
      } catch (error) {
        expect(String((error as Error).message)).not.toContain('the-secret');
      }
    }
    expect(box.open(sealed, { kind: 'bank_adapter', id: 'adp_1' })).toBe('whsec_the-secret');
  });

  test('when SECRETS_KEY changes and the old key is kept in SECRETS_KEYS_OLD, then old secrets open, new ones are sealed under the new key only', () => {
    const before = new SecretBox('the-old-key-0123456789');
    const after = new SecretBox('the-new-key-0123456789', ['the-old-key-0123456789']);
    const sealedBefore = before.seal('whsec_old', endpoint);

    const sealedAfter = after.seal('whsec_new', endpoint);

    expect(after.open(sealedBefore, endpoint)).toBe('whsec_old');
    expect([after.isCurrent(sealedBefore), after.isCurrent(sealedAfter)]).toEqual([false, true]);
    expect(() => before.open(sealedAfter, endpoint)).toThrow(SecretNotOpened);
    expect(() => new SecretBox('the-new-key-0123456789').open(sealedBefore, endpoint)).toThrow(SecretNotOpened);
  });

  test('when a secret was sealed the old way (v1: SHA-256 of the key, no row), then it still opens, under the key or an old one, and is not current', () => {
    const legacySeal = (key: string, plaintext: string) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(key).digest(), iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
    };
    const v1 = legacySeal('the-old-key-0123456789', 'whsec_legacy');

    expect(new SecretBox('the-old-key-0123456789').open(v1, endpoint)).toBe('whsec_legacy');
    expect(new SecretBox('the-new-key-0123456789', ['the-old-key-0123456789']).open(v1, { kind: 'bank_adapter', id: 'adp_9' })).toBe('whsec_legacy');
    expect(new SecretBox('the-old-key-0123456789').isCurrent(v1)).toBe(false);
    expect(() => new SecretBox('the-new-key-0123456789').open(v1, endpoint)).toThrow(SecretNotOpened);
  });

  test('when a key of the ring is shorter than 16 characters, then the box refuses it', () => {
    expect(() => new SecretBox('a-key-of-sixteen-chars', ['short'])).toThrow(/at least 16/);
  });
});
