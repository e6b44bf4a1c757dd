import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from './logger';

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
  /** Who decided: Redis (shared by every replica), or this process (a remembered refusal, or Redis away). */
  decidedBy: 'redis' | 'process';
}

export interface RateLimiterOptions {
  /** Keys this process remembers (refusals, and buckets while Redis is away); the least recently used go first. Default 10,000. */
  localKeys?: number;
  /** A monotonic clock in milliseconds for what this process decides itself. */
  nowMs?: () => number;
  /** Told when Redis stops answering and when it answers again: once per change, never per request. */
  onRedisChange?: (answering: boolean, error?: unknown) => void;
}

/** The script as a command of the connection: ioredis sends EVALSHA, and the script text only once per server. */
interface TakeTokenCommand {
  pmatchTakeToken(key: string, ratePerSecond: number, burst: number): Promise<[number, number]>;
}

interface LocalBucket {
  tokens: number;
  atMs: number;
}

/**
 * The token bucket of `TAKE_TOKEN`, shared through Redis, with two things kept in the process: a
 * refusal is remembered until its Retry-After, so a client hammering past its limit is answered
 * without a Redis call; and while Redis cannot answer, each process keeps the same buckets of its
 * own, so the limit still holds per replica (docs/decisions/0070-limits-before-authentication.md).
 * `take` never throws.
 */
export class RateLimiter {
  private readonly redis: Redis & TakeTokenCommand;
  private readonly refusedUntil: LRUCache<string, number>;
  private readonly localBuckets: LRUCache<string, LocalBucket>;
  private readonly nowMs: () => number;
  private redisAnswering = true;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly options: RateLimiterOptions = {},
  ) {
    redis.defineCommand('pmatchTakeToken', { numberOfKeys: 1, lua: TAKE_TOKEN });
    this.redis = redis as Redis & TakeTokenCommand;
    this.refusedUntil = new LRUCache({ max: options.localKeys ?? 10_000 });
    this.localBuckets = new LRUCache({ max: options.localKeys ?? 10_000 });
    this.nowMs = options.nowMs ?? (() => performance.now());
  }

  /** How long a refusal of `key` this process remembers still holds (0: none), without asking Redis. */
  refusedForMs(key: string): number {
    const until = this.refusedUntil.get(key);
    return until === undefined ? 0 : Math.max(0, Math.ceil(until - this.nowMs()));
  }

  async take(key: string): Promise<RateDecision> {
    const now = this.nowMs();
    const until = this.refusedUntil.get(key);
    if (until !== undefined && until > now) return { allowed: false, retryAfterMs: Math.ceil(until - now), decidedBy: 'process' };
    let decision: RateDecision;
    try {
      const [allowed, waitMs] = await this.redis.pmatchTakeToken(`${this.prefix}rate:${key}`, this.ratePerSecond, this.burst);
      this.redisAnswered(true);
      decision = { allowed: allowed === 1, retryAfterMs: waitMs, decidedBy: 'redis' };
    } catch (error) {
      this.redisAnswered(false, error);
      decision = this.takeLocally(key, now);
    }
    if (!decision.allowed) this.refusedUntil.set(key, now + decision.retryAfterMs);
    return decision;
  }

  /**
   * Spends a token of `key` for something already answered (a refusal), without waiting: in the
   * process at once, so that this process refuses the key from its next request on once its own
   * bucket is empty, and in Redis, so that every replica's count adds up.
   */
  spend(key: string): void {
    const now = this.nowMs();
    this.takeLocally(key, now);
    const left = this.localBuckets.get(key)!.tokens;
    if (left < 1) this.refusedUntil.set(key, now + Math.ceil(((1 - left) * 1000) / this.ratePerSecond));
    this.redis.pmatchTakeToken(`${this.prefix}rate:${key}`, this.ratePerSecond, this.burst).then(
      ([allowed, waitMs]) => {
        this.redisAnswered(true);
        if (allowed !== 1) this.refusedUntil.set(key, Math.max(this.refusedUntil.get(key) ?? 0, this.nowMs() + waitMs));
      },
      (error: unknown) => this.redisAnswered(false, error),
    );
  }

  private takeLocally(key: string, now: number): RateDecision {
    const bucket = this.localBuckets.get(key) ?? { tokens: this.burst, atMs: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.atMs) * this.ratePerSecond) / 1000);
    bucket.atMs = now;
    this.localBuckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterMs: 0, decidedBy: 'process' };
    }
    return { allowed: false, retryAfterMs: Math.ceil(((1 - bucket.tokens) * 1000) / this.ratePerSecond), decidedBy: 'process' };
  }

  private redisAnswered(answering: boolean, error?: unknown): void {
    if (answering === this.redisAnswering) return;
    this.redisAnswering = answering;
    this.options.onRedisChange?.(answering, error);
  }
}

/** An `onRedisChange` that logs each change once: a warning when Redis stops answering, a note when it is back. */
export function logRedisChanges(logger: Logger): NonNullable<RateLimiterOptions['onRedisChange']> {
  return (answering, error) => {
    if (answering) logger.info('rate limits are shared through Redis again');
    else logger.warn({ err: error }, 'Redis does not answer: each process keeps the rate limits by itself until it does');
  };
}
