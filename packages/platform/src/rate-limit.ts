import type { Redis } from 'ioredis';

/**
 * A token bucket per key in Redis, refilled continuously: `ratePerSecond` sustained, `burst` at
 * most at once. One Lua call per request keeps it atomic across replicas. Redis TIME is the clock,
 * so replicas with skewed clocks share one bucket fairly.
 */
const TAKE_TOKEN = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + (now - at) * rate / 1000)
local allowed = 0
local wait_ms = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait_ms = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, wait_ms}`;

export interface RateDecision {
  allowed: boolean;
  retryAfterMs: number;
}

/** The script as a command of the connection: ioredis sends EVALSHA, and the script text only once per server. */
interface TakeTokenCommand {
  pmatchTakeToken(key: string, ratePerSecond: number, burst: number): Promise<[number, number]>;
}

export class RateLimiter {
  private readonly redis: Redis & TakeTokenCommand;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly ratePerSecond: number,
    private readonly burst: number,
  ) {
    redis.defineCommand('pmatchTakeToken', { numberOfKeys: 1, lua: TAKE_TOKEN });
    this.redis = redis as Redis & TakeTokenCommand;
  }

  async take(key: string): Promise<RateDecision> {
    const [allowed, waitMs] = await this.redis.pmatchTakeToken(`${this.prefix}rate:${key}`, this.ratePerSecond, this.burst);
    return { allowed: allowed === 1, retryAfterMs: waitMs };
  }
}
