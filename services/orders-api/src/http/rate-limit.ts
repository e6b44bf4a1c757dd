import { AppError } from '@pmatch/contracts';
import type { RateLimiter } from '@pmatch/platform';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Counter } from 'prom-client';
import { apiKeyAuthOf } from './api-key-auth';

/**
 * Per API key (100/s, bursts of 200 by default: docs/guide.md "Limits"). While Redis cannot answer,
 * each process keeps the limit by itself (`RateLimiter`).
 */
export function rateLimit(limiter: RateLimiter, limited: Counter<'limit' | 'decided_by'>): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const decision = await limiter.take(apiKeyAuthOf(req).keyId);
    if (!decision.allowed) {
      limited.inc({ limit: 'api-key', decided_by: decision.decidedBy });
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000))));
      throw new AppError('rate_limited', 'Too many requests for this API key; retry after the time in Retry-After.');
    }
    next();
  };
}
