import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type NextFunction, type Request, type Response } from 'express';
import { AppError, LIMITS } from '@pmatch/contracts';
import { isTransientDatabaseError } from '@pmatch/db';
import { Histogram, type Registry } from 'prom-client';
import type { z } from 'zod';
import type { Logger } from './logger';

declare global {
  namespace Express {
    interface Request {
      requestId: string;
      /** The body exactly as received, for signature checks over the raw bytes. */
      rawBody?: Buffer;
    }
  }
}

export interface HttpAppOptions {
  logger: Logger;
  metrics: Registry;
  /** Each check throws when its dependency is not usable; /readyz answers 503 then. */
  readiness: Record<string, () => Promise<void>>;
}

/**
 * The common front of every service: request ids, JSON bodies with a size limit, health and
 * metrics endpoints. Routes are mounted by the caller, then `finishHttpApp` adds the 404 and the
 * one error handler.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route', 'status'],
    registers: [options.metrics],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    req.requestId = `req_${randomUUID().replace(/-/g, '')}`;
    res.setHeader('Request-Id', req.requestId);
    const end = duration.startTimer({ method: req.method });
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      end({ route: `${req.baseUrl}${route}`, status: String(res.statusCode) });
    });
    next();
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      Object.entries(options.readiness).map(async ([name, check]) => {
        try {
          await check();
          return [name, 'ok'] as const;
        } catch {
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', checks: Object.fromEntries(results) });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', options.metrics.contentType);
    res.send(await options.metrics.metrics());
  });
  app.use(
    express.json({
      limit: LIMITS.requestBodyBytes,
      strict: true,
      type: () => true,
      verify: (req, _res, buf) => {
        (req as Request).rawBody = buf;
      },
    }),
  );
  return app;
}

export function finishHttpApp(app: Express, logger: Logger): void {
  app.use((_req: Request, _res: Response, next: NextFunction) => {
    next(new AppError('resource_missing', 'No such endpoint.'));
  });
  app.use(errorHandler(logger));
}

function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const appError = toAppError(error);
    if (appError.status >= 500) {
      logger.error({ err: error, requestId: req.requestId, method: req.method, path: loggablePath(req.path) }, 'request failed');
    }
    const retryable = appError.code === 'rate_limited' || appError.code === 'service_unavailable';
    if (retryable && !res.getHeader('Retry-After')) res.setHeader('Retry-After', '1');
    res.status(appError.status).json(appError.toBody(req.requestId));
  };
}

/** A payment page token is the key to that page: it never goes into a log. */
function loggablePath(path: string): string {
  return path.replace(/^\/pay\/[^/]+/, '/pay/[token]');
}

/** Body-parser errors carry a `type`; everything unknown is an internal error, told as nothing more. */
function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  // Express could not percent-decode a path parameter: the client sent a malformed URL.
  if (error instanceof URIError) return new AppError('parameter_invalid', 'The URL is malformed (bad percent-encoding).');
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed') return new AppError('invalid_json', 'The request body is not valid JSON.');
  if (type === 'entity.too.large') {
    return new AppError('body_too_large', `The request body exceeds ${LIMITS.requestBodyBytes} bytes.`);
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new AppError('parameter_invalid', 'The request body encoding is not supported; send UTF-8 JSON.');
  }
  // Overload or a database restart: the client's retry will succeed, so say so (503, Retry-After).
  if (isTransientDatabaseError(error)) {
    return new AppError('service_unavailable', 'The service is briefly unable to reach its database; retry later.', { cause: error });
  }
  return new AppError('internal_error', 'An internal error occurred. It has been logged; retry later.', { cause: error });
}

/**
 * Parses input with a contract schema, turning the first problem into a 400 that names the
 * parameter. Unknown fields are refused rather than silently ignored: a typo must not go unseen.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'body'): z.infer<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    return fail('parameter_unknown', `Unknown parameter: ${key}.`, key);
  }
  const param = issue.path.map(String).join('.');
  if (param === '' && issue.code === 'custom') return fail('parameter_missing', `The ${what} is incomplete: ${issue.message}.`);
  if (param === '') return fail('parameter_invalid', `The ${what} must be a JSON object.`);
  const missing = issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined;
  return fail(
    missing ? 'parameter_missing' : 'parameter_invalid',
    missing ? `Missing required parameter: ${param}.` : `Invalid ${param}: ${issue.message}.`,
    param,
  );
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value: unknown = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function fail(code: 'parameter_missing' | 'parameter_invalid' | 'parameter_unknown', message: string, param?: string): never {
  throw new AppError(code, message, param === undefined ? {} : { param });
}

export async function listen(app: Express, port: number, host = '0.0.0.0'): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(server)));
  });
}

/** Stops accepting connections and waits for in-flight requests to finish. */
export async function closeServer(server: Server): Promise<void> {
  server.closeIdleConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
