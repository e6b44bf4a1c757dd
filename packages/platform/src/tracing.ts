import type { NextFunction, Request, Response } from 'express';
import { TRACEPARENT_HEADER, continueTrace, runInTrace, type TraceContext } from '@pmatch/db';
import type { Logger } from './logger';

export {
  TRACEPARENT_HEADER,
  continueTrace,
  currentTrace,
  currentTraceparent,
  formatTraceparent,
  parseTraceparent,
  runInTrace,
  type TraceContext,
} from '@pmatch/db';

/**
 * Each request runs as a span of the trace its `traceparent` header names (a new trace without
 * one), and leaves one access log line when it ends: method,
 * route pattern (never the path: a payment page's token is in it), status, duration and request id.
 */
export function tracedRequests(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const trace = continueTrace(req.headers[TRACEPARENT_HEADER]);
    // Nothing to build for a line that would not be written (a level above info).
    if (logger.isLevelEnabled('info')) logWhenFinished(logger, req, res, trace);
    runInTrace(trace, next);
  };
}

function logWhenFinished(logger: Logger, req: Request, res: Response, trace: TraceContext): void {
  const startedAt = process.hrtime.bigint();
  res.once('finish', () => {
    // In the request's trace: `finish` is emitted outside it.
    runInTrace(trace, () =>
      logger.info(
        {
          method: req.method,
          route: routeOf(req),
          status: res.statusCode,
          duration_ms: Number((process.hrtime.bigint() - startedAt) / 1000n) / 1000,
          request_id: req.requestId,
        },
        'request',
      ),
    );
  });
}

/** The pattern of the route that answered (`/v1/orders/:id`), or `unmatched`. */
function routeOf(req: Request): string {
  const route = (req.route as { path?: string } | undefined)?.path;
  return route === undefined ? 'unmatched' : `${req.baseUrl}${route}`;
}
