import type { RateLimiter } from '@pmatch/platform';

/** The limiter of refused requests per client address, shared by every surface that answers without an API key. */
export type RefusalLimiter = RateLimiter;

export const TOO_MANY_REFUSALS = 'Too many refused requests from this address; retry after the time in Retry-After.';
