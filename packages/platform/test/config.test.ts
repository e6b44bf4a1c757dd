import { BaseConfig, ConfigError, loadConfig } from '../src';

describe('loadConfig', () => {
  test('when nothing is set, then the local defaults of the README apply', () => {
    const config = loadConfig(BaseConfig, {});
    expect(config).toMatchObject({
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/matching',
      RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:5672',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PUBLIC_BASE_URL: 'http://localhost:3000',
    });
  });

  test('when values are invalid, then one error lists every problem and no value', () => {
    expect(() => loadConfig(BaseConfig, { DATABASE_URL: 'not a url', LOG_LEVEL: 'loud', SECRETS_KEY: 'short' })).toThrow(ConfigError);
    try {
      loadConfig(BaseConfig, { DATABASE_URL: 'not a url', LOG_LEVEL: 'loud', SECRETS_KEY: 'short' });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/DATABASE_URL/);
      expect(message).toMatch(/LOG_LEVEL/);
      expect(message).toMatch(/SECRETS_KEY/);
      expect(message).not.toContain('short');
    }
  });

  test('when production runs without its own SECRETS_KEY, then it refuses to start', () => {
    expect(() => loadConfig(BaseConfig, { NODE_ENV: 'production' })).toThrow(/SECRETS_KEY/);
    expect(loadConfig(BaseConfig, { NODE_ENV: 'production', SECRETS_KEY: 'a-real-secret-of-our-own' }).NODE_ENV).toBe('production');
  });

  test('when SECRETS_KEYS_OLD lists earlier keys, then each is taken; a short one is refused without showing it', () => {
    expect(loadConfig(BaseConfig, { SECRETS_KEYS_OLD: 'an-old-key-0123456789, another-old-key-0123' }).SECRETS_KEYS_OLD).toEqual([
      'an-old-key-0123456789',
      'another-old-key-0123',
    ]);
    expect(loadConfig(BaseConfig, {}).SECRETS_KEYS_OLD).toEqual([]);
    expect(() => loadConfig(BaseConfig, { SECRETS_KEYS_OLD: 'an-old-key-0123456789,tiny' })).toThrow(
      /SECRETS_KEYS_OLD\.1: each key must be at least 16 characters/,
    );
    expect(() => loadConfig(BaseConfig, { SECRETS_KEYS_OLD: 'tiny' })).not.toThrow(/tiny/);
  });
});
