import { AppError } from '@pmatch/contracts';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { Counter, type Registry } from 'prom-client';
import type { RateLimiter } from './rate-limit';

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const CANONICAL_IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/**
 * The client's address as limits count it: `req.ip` (the connection's address, or X-Forwarded-For
 * where TRUST_PROXY says so), grouped by `addressGroup`.
 */
export function clientAddress(req: Request): string {
  return addressGroup(req.ip ?? req.socket.remoteAddress ?? '');
}

/**
 * What counts as one client among addresses: IPv4 as itself, IPv4-mapped IPv6 as IPv4, and IPv6 by
 * its /64, which one subscriber usually holds whole (counting single IPv6 addresses would give each
 * client 2^64 allowances). Every count per address (limits, log-in throttles, connections) uses it.
 */
export function addressGroup(raw: string): string {
  // Already as ipaddr.js would write it (a connection's own IPv4 address): every request has one.
  if (CANONICAL_IPV4.test(raw)) return raw;
  if (!ipaddr.isValid(raw)) return raw === '' ? 'unknown' : raw;
  const address = ipaddr.process(raw);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

/** Requests refused by a rate limit, by limit and by who decided (Redis, or the process itself). */
export function limitedRequestsCounter(registry: Registry): Counter<'limit' | 'decided_by'> {
  return new Counter({
    name: 'pmatch_requests_limited_total',
    help: 'Requests answered 429 by a rate limit (per API key or per client address)',
    labelNames: ['limit', 'decided_by'],
    registers: [registry],
  });
}

export interface AddressLimitOptions {
  /** Names the limit in Redis keys and in `pmatch_requests_limited_total{limit}`. */
  name: string;
  limiter: RateLimiter;
  /**
   * Which requests spend the address's allowance: every one, or only those answered with one of
   * these statuses (refusals: an unknown key, an unknown payment page). Once the allowance is
   * spent, every request of the address is refused until its Retry-After.
   */
  counts: 'every request' | readonly number[];
  /** The 429's message. */
  message: string;
  limited: Counter<'limit' | 'decided_by'>;
}

/**
 * A limit per client address, meant in front of everything a route does: a refused request is
 * answered 429 `rate_limited` with Retry-After before its body is read, and its connection closed.
 * When only refusals count, a request costs nothing before its answer; a counted answer is spent
 * after it (`RateLimiter.spend`), and an address past its allowance is refused from this process's
 * memory (docs/decisions/0070-limits-before-authentication.md).
 */
export function addressLimit(options: AddressLimitOptions): RequestHandler {
  const { name, limiter, counts, limited } = options;
  const refuse = (res: Response, next: NextFunction, retryAfterMs: number, decidedBy: string) => {
    limited.inc({ limit: name, decided_by: decidedBy });
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    res.setHeader('Connection', 'close');
    next(new AppError('rate_limited', options.message));
  };
  if (counts === 'every request') {
    return async (req, res, next) => {
      const decision = await limiter.take(`address:${name}:${clientAddress(req)}`);
      if (decision.allowed) next();
      else refuse(res, next, decision.retryAfterMs, decision.decidedBy);
    };
  }
  const counted = new Set(counts);
  return (req, res, next) => {
    const key = `address:${name}:${clientAddress(req)}`;
    const refusedForMs = limiter.refusedForMs(key);
    if (refusedForMs > 0) return refuse(res, next, refusedForMs, 'process');
    res.once('finish', () => {
      if (counted.has(res.statusCode)) limiter.spend(key);
    });
    next();
  };
}
