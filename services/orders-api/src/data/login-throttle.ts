import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Wrong passwords in a row an account may have before the next attempt is refused unchecked. */
export const ACCOUNT_FAILURES_ALLOWED = 9;
/** Wrong passwords an address may send before its attempts are refused, whatever the account. */
export const ADDRESS_FAILURES_ALLOWED = 50;
/** How long a run of failures is remembered after the last one. */
export const FAILURE_MEMORY_MS = 15 * 60 * 1000;

/**
 * Log-in failures counted in Redis per account (its e-mail, hashed, known or not) and per address,
 * so every replica sees the same counts. A success ends the account's run. Redis that cannot
 * answer makes `mayTry` throw: log-ins then stop rather than run unthrottled.
 */
export class LoginThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private keys(email: string, address: string): [string, string] {
    const account = createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
    return [`${this.prefix}login:account:${account}`, `${this.prefix}login:address:${address}`];
  }

  async mayTry(email: string, address: string): Promise<boolean> {
    const [account, byAddress] = await this.redis.mget(...this.keys(email, address));
    return Number(account ?? 0) < ACCOUNT_FAILURES_ALLOWED && Number(byAddress ?? 0) < ADDRESS_FAILURES_ALLOWED;
  }

  async failed(email: string, address: string): Promise<void> {
    const [account, byAddress] = this.keys(email, address);
    await this.redis.multi().incr(account).pexpire(account, FAILURE_MEMORY_MS).incr(byAddress).pexpire(byAddress, FAILURE_MEMORY_MS).exec();
  }

  async succeeded(email: string, address: string): Promise<void> {
    await this.redis.del(this.keys(email, address)[0]);
  }
}
