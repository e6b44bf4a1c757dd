import { AppError } from '@pmatch/contracts';
import type { Logger, RateLimiter } from '@pmatch/platform';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { authOf } from './auth';

/**
 * Per API key (100/s, bursts of 200: docs/guide.md "Limits"). If Redis cannot answer, the request goes through:
 * a limiter outage must not become an API outage; it is logged.
 */
export function rateLimit(limiter: RateLimiter, logger: Logger): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    let decision;
    try {
      decision = await limiter.take(authOf(req).keyId);
    } catch (error) {
      logger.warn({ err: error }, 'rate limiter unavailable; request allowed');
      return next();
    }
    if (!decision.allowed) {
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000))));
      throw new AppError('rate_limited', 'Too many requests for this API key; retry after the time in Retry-After.');
    }
    next();
  };
}
