import { REDIS_URL, uniqueName } from '@pmatch/testkit';
import { Redis } from 'ioredis';
import { LockTimeoutError, RedisLock, SecretBox, constantTimeEqual, newSigningSecret } from '../src';

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

  test('constantTimeEqual compares content and length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });
});
