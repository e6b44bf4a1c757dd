import { createHash } from 'node:crypto';
import { addressGroup } from '@pmatch/platform';
import type { Redis } from 'ioredis';

/**
 * Takes one try for an account and an address at once, or none: a try is counted before the
 * secret is checked, so parallel requests cannot all be checked before the first failure counts.
 * Each count is remembered `ARGV[3]` ms after its last try.
 */
const RESERVE = `
local account = tonumber(redis.call('GET', KEYS[1]) or '0')
local address = tonumber(redis.call('GET', KEYS[2]) or '0')
if account >= tonumber(ARGV[1]) or address >= tonumber(ARGV[2]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1`;

/** A try that proved right ends the account's run and gives the address its try back. */
const RELEASE = `
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 1`;

interface ThrottleCommands {
  pmatchReserveTry(account: string, address: string, accountAllowed: number, addressAllowed: number, memoryMs: number): Promise<number>;
  pmatchReleaseTry(account: string, address: string): Promise<number>;
}

export interface ThrottleLimits {
  /** Tries an account may have (in a row, for throttles whose successes end the run) before the next is refused unchecked. */
  perAccount: number;
  /** Tries an address (an IPv6 /64) may have, whatever the account. */
  perAddress: number;
  /** How long a run of tries is remembered after the last. */
  memoryMs: number;
}

/** A try taken: say how it went. A failure leaves the try spent; a success ends the account's run. */
export interface ThrottledTry {
  succeeded(): Promise<void>;
}

/**
 * Tries of a secret (a password, a second-factor code) counted in Redis per account and per
 * address, so every replica sees the same counts (docs/decisions/0151-throttles-reserve-before-checking.md).
 * `take` reserves a try before anything is checked and resolves with undefined, reserving nothing,
 * when the account or the address has none left. Redis that cannot answer makes `take` throw: the
 * caller then refuses rather than check unthrottled.
 */
export class FailureThrottle {
  private readonly redis: Redis & ThrottleCommands;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    /** Names the throttle in its Redis keys: `login`, `reentry`, `password_reset`. */
    private readonly name: string,
    readonly limits: ThrottleLimits,
  ) {
    redis.defineCommand('pmatchReserveTry', { numberOfKeys: 2, lua: RESERVE });
    redis.defineCommand('pmatchReleaseTry', { numberOfKeys: 2, lua: RELEASE });
    this.redis = redis as Redis & ThrottleCommands;
  }

  private keys(account: string, address: string): [string, string] {
    const hashed = createHash('sha256').update(account.trim().toLowerCase()).digest('hex');
    return [`${this.prefix}${this.name}:account:${hashed}`, `${this.prefix}${this.name}:address:${addressGroup(address)}`];
  }

  async take(account: string, address: string): Promise<ThrottledTry | undefined> {
    const [accountKey, addressKey] = this.keys(account, address);
    const { perAccount, perAddress, memoryMs } = this.limits;
    if ((await this.redis.pmatchReserveTry(accountKey, addressKey, perAccount, perAddress, memoryMs)) !== 1) return undefined;
    return { succeeded: async () => void (await this.redis.pmatchReleaseTry(accountKey, addressKey)) };
  }

  /** Forgets the account's run (an admin unlocked the person, or they set a new password). */
  async forget(account: string): Promise<void> {
    await this.redis.del(this.keys(account, '')[0]);
  }
}

const FIFTEEN_MINUTES = 15 * 60 * 1000;

/**
 * The console's throttles. `login`: wrong passwords and wrong second-factor codes of one e-mail
 * address (known or not) and of one client address. `reentry`: a signed-in person typing their
 * password or a code again before a sensitive action, per person. `passwordReset`: e-mails asked
 * for per address asked about and per client address (every request counts).
 */
export interface ConsoleThrottles {
  login: FailureThrottle;
  reentry: FailureThrottle;
  passwordReset: FailureThrottle;
}

export const LOGIN_LIMITS: ThrottleLimits = { perAccount: 9, perAddress: 50, memoryMs: FIFTEEN_MINUTES };
export const REENTRY_LIMITS: ThrottleLimits = { perAccount: 5, perAddress: 50, memoryMs: FIFTEEN_MINUTES };
export const PASSWORD_RESET_LIMITS: ThrottleLimits = { perAccount: 3, perAddress: 20, memoryMs: FIFTEEN_MINUTES };

export function consoleThrottles(redis: Redis, prefix: string): ConsoleThrottles {
  return {
    login: new FailureThrottle(redis, prefix, 'login', LOGIN_LIMITS),
    reentry: new FailureThrottle(redis, prefix, 'reentry', REENTRY_LIMITS),
    passwordReset: new FailureThrottle(redis, prefix, 'password_reset', PASSWORD_RESET_LIMITS),
  };
}
