import { Redis } from 'ioredis';
import { REDIS_URL, uniqueName } from '@pmatch/testkit';
import { FailureThrottle } from '../src/data/login-throttle';
import { newRecoveryCodes, normalRecoveryCode, recoveryCodeHash } from '../src/domain/recovery-codes';

/** The console's throttles in Redis: tries taken before anything is checked, per account and per address (IPv6 by /64). */
describe('FailureThrottle', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(() => {
    redis.disconnect();
  });
  const throttle = (perAccount: number, perAddress: number) =>
    new FailureThrottle(redis, uniqueName('pmatch-test:'), 'login', { perAccount, perAddress, memoryMs: 60_000 });

  test('when 80 tries for one account arrive at once, then exactly as many as the account allows are taken, whoever comes first', async () => {
    const limited = throttle(9, 1_000);

    const taken = await Promise.all(Array.from({ length: 80 }, (_, i) => limited.take('Person@Example.com ', `203.0.113.${i % 200}`)));

    expect(taken.filter((t) => t !== undefined)).toHaveLength(9);
    expect(await limited.take('person@example.com', '198.51.100.1')).toBeUndefined();
  });

  test('when addresses of one IPv6 /64 try, then they share one allowance; another /64 has its own', async () => {
    const limited = throttle(1_000, 3);
    const sameSubscriber = ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::9'];

    for (const [i, address] of sameSubscriber.entries()) expect(await limited.take(`a${i}@example.com`, address)).toBeDefined();

    expect(await limited.take('b@example.com', '2001:db8:1:2:abcd::1')).toBeUndefined();
    expect(await limited.take('b@example.com', '2001:db8:1:3::1')).toBeDefined();
  });

  test('when a try succeeds, then the account starts a new run and the address gets its try back; a failure stays counted', async () => {
    const limited = throttle(2, 2);
    await limited.take('c@example.com', '192.0.2.1');
    const right = await limited.take('c@example.com', '192.0.2.1');

    await right!.succeeded();

    expect(await limited.take('c@example.com', '192.0.2.1')).toBeDefined();
    expect(await limited.take('c@example.com', '192.0.2.1')).toBeUndefined();
  });

  test('when an account is forgotten (its access reset), then it may try again at once', async () => {
    const limited = throttle(1, 100);
    await limited.take('d@example.com', '192.0.2.2');
    expect(await limited.take('d@example.com', '192.0.2.2')).toBeUndefined();

    await limited.forget('D@example.com');

    expect(await limited.take('d@example.com', '192.0.2.2')).toBeDefined();
  });

  test('when Redis does not answer, then taking a try throws (the caller refuses), never lets the check run unthrottled', async () => {
    const gone = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    const limited = new FailureThrottle(gone, 'x:', 'login', { perAccount: 9, perAddress: 50, memoryMs: 1_000 });

    await expect(limited.take('e@example.com', '192.0.2.3')).rejects.toThrow();
    gone.disconnect();
  });
});

describe('recovery codes', () => {
  test('when codes are made, then there are ten different ones of 80 random bits, and a typed one is found however it is written', () => {
    const codes = newRecoveryCodes();

    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    const typed = ` ${codes[0]!.toUpperCase().replace(/-/g, ' ')} `;
    expect(recoveryCodeHash(normalRecoveryCode(typed)!)).toBe(recoveryCodeHash(normalRecoveryCode(codes[0]!)!));
    expect(normalRecoveryCode('123456')).toBeUndefined();
    expect(normalRecoveryCode('abcd-efgh-ijkl-mno1')).toBeUndefined();
  });
});
