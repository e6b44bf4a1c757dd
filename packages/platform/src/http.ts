import { randomUUID } from 'node:crypto';
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import express, { type ErrorRequestHandler, type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError, LIMITS, typeOfStatus } from '@pmatch/contracts';
import { isTransientDatabaseError } from '@pmatch/db';
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { z } from 'zod';
import type { Logger } from './logger';
import { addressGroup } from './address-limit';

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
  /**
   * Where JSON bodies are parsed: before every route ('all', the default), or only where the
   * service mounts `jsonBodies()` ('where mounted'), e.g. after authentication, so that a request
   * without a valid key is refused without its body being read.
   */
  bodies?: 'all' | 'where mounted';
  /** Whose X-Forwarded-For gives `req.ip` (TRUST_PROXY, see `TrustProxySetting`); by default nobody's. */
  trustProxy?: false | number | string[];
}

const newRequestId = () => `req_${randomUUID().replace(/-/g, '')}`;

/** How deep a JSON body may nest (objects and arrays); deeper bodies are refused with 400. */
export const MAX_JSON_DEPTH = 32;

/**
 * The common front of every service: request ids, request metrics, JSON bodies with size and
 * depth limits. Routes are mounted by the caller, then `finishHttpApp` adds the 404 and the one
 * error handler. Health and metrics are on the admin port (`admin-server.ts`), not here.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', options.trustProxy ?? false);
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route', 'status'],
    registers: [options.metrics],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  });
  // What a draining instance still owes its clients, and what waits behind a slow dependency.
  const inFlight = new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests received on the public port and not yet answered or abandoned',
    registers: [options.metrics],
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    req.requestId = newRequestId();
    res.setHeader('Request-Id', req.requestId);
    inFlight.inc();
    res.once('close', () => inFlight.dec());
    const end = duration.startTimer({ method: req.method });
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      end({ route: `${req.baseUrl}${route}`, status: String(res.statusCode) });
    });
    next();
  });
  if ((options.bodies ?? 'all') === 'all') app.use(jsonBodies());
  return app;
}

/**
 * Parses a JSON body of any content type, at most LIMITS.requestBodyBytes (else 413) and at most
 * MAX_JSON_DEPTH levels deep (else 400, before any handler sees it: code that walks a body, such
 * as a fingerprint, must never meet one deep enough to exhaust the stack). A `__proto__` key is
 * refused too (400): JSON.parse keeps it as a plain key, but schema parsing and copying drop it
 * or turn it into a prototype, so a merchant's data would be lost without a word. Keeps the raw
 * bytes for signature checks.
 */
export function jsonBodies(): RequestHandler[] {
  return [
    express.json({
      limit: LIMITS.requestBodyBytes,
      strict: true,
      type: () => true,
      verify: (req, _res, buf) => {
        (req as Request).rawBody = buf;
      },
    }),
    (req: Request, _res: Response, next: NextFunction) => {
      const problem = bodyShapeProblem(req.body, MAX_JSON_DEPTH);
      if (problem === 'too deep') {
        next(new AppError('parameter_invalid', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`));
        return;
      }
      if (problem !== undefined) {
        next(new AppError('parameter_invalid', 'The key __proto__ is not allowed in a request body.', { param: problem.join('.') }));
        return;
      }
      next();
    },
  ];
}

/**
 * 'too deep' when objects and arrays nest more than `levels` deep, the path of a `__proto__` key,
 * or undefined for a body of a shape we take. Walked with a stack of its own, not recursion.
 */
function bodyShapeProblem(value: unknown, levels: number): 'too deep' | string[] | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.path.length >= levels) return 'too deep';
    if (Object.hasOwn(next.value, '__proto__')) return [...next.path, '__proto__'];
    for (const [key, child] of Object.entries(next.value)) pending.push({ value: child, path: [...next.path, key] });
  }
  return undefined;
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

/** A payment page's or payment link's token is the key to that page: it never goes into a log. */
function loggablePath(path: string): string {
  return path.replace(/^\/(pay|link)\/[^/]+/, '/$1/[token]');
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
  // Any other refusal of the body parser is the client's (a gzip body that is not gzip, a body
  // shorter than its Content-Length): body-parser marks those with a 4xx status.
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('parameter_invalid', 'The request body could not be read (check Content-Encoding and Content-Length).');
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

/**
 * How long an idle keep-alive connection stays open. Longer than the idle timeout of the load
 * balancers and client pools in front of us (60 s is the common one), so the client side always
 * closes an idle connection first: with Node's 5 s, a client or balancer reusing a connection just
 * as the server closed it got a reset instead of an answer (the likely cause of a few requests
 * left with no answer in a bench run). Node (18 and later) starts the headers' timeout when a
 * request begins, not when the connection falls idle, so it may be far shorter than this.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** What a server allows its clients (HTTP_* settings; `httpServerLimits` reads them). */
export interface HttpServerLimits {
  /** A request's headers must arrive within this; else 408 and the connection is closed. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this; else 408 and the connection is closed. */
  requestTimeoutMs: number;
  /** Open connections at most; a connection beyond is closed unanswered. */
  maxConnections: number;
  /** Open connections one peer address may hold (0: unbounded); a connection beyond is closed unanswered. */
  maxConnectionsPerAddress: number;
}

export const DEFAULT_HTTP_SERVER_LIMITS: HttpServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  maxConnections: 10_000,
  maxConnectionsPerAddress: 1_000,
};

export function httpServerLimits(config: {
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_MAX_CONNECTIONS: number;
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: number;
}): HttpServerLimits {
  return {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    maxConnections: config.HTTP_MAX_CONNECTIONS,
    maxConnectionsPerAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
  };
}

/** Servers `closeServer` is closing. */
const closing = new WeakSet<Server>();

/**
 * Serves `app` with Node's strict parser (malformed requests never reach it: see
 * `answerMalformedRequest`), the timeouts and connection bounds of `limits`, and idle connections
 * kept `KEEP_ALIVE_TIMEOUT_MS` (docs/decisions/0071-http-servers-against-slow-and-malformed-clients.md).
 */
export async function listen(app: Express, port: number, host = '0.0.0.0', limits: HttpServerLimits = DEFAULT_HTTP_SERVER_LIMITS): Promise<Server> {
  const requestTimeout = limits.requestTimeoutMs;
  const headersTimeout = Math.min(limits.headersTimeoutMs, requestTimeout);
  const server = createServer(
    {
      headersTimeout,
      requestTimeout,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // Node looks for overdue requests this often (30 s by default, which would stretch a 10 s timeout to 40 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
      insecureHTTPParser: false,
      requireHostHeader: true,
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  if (limits.maxConnectionsPerAddress > 0) boundConnectionsPerAddress(server, limits.maxConnectionsPerAddress);
  server.on('clientError', answerMalformedRequest);
  // Closing ends only the connections idle at that moment: one whose request was still running
  // would stay open for the whole keep-alive timeout after its answer, and hold up the shutdown.
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    res.on('finish', () => {
      if (closing.has(server)) setImmediate(() => server.closeIdleConnections());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * Closes a connection from a peer that already holds `max`. The peer is the connection's own
 * address (a proxy's, behind one): X-Forwarded-For is not known before a request is read. IPv6
 * peers count by their /64 (`addressGroup`).
 */
function boundConnectionsPerAddress(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = addressGroup(socket.remoteAddress ?? '');
    const count = open.get(address) ?? 0;
    if (count >= max) {
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/**
 * Requests Node refuses before Express sees them (bytes that are not HTTP, headers over Node's
 * 16 KiB, a request that never finished arriving) get the error body every other refusal has,
 * instead of Node's bare status line.
 */
function answerMalformedRequest(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request did not arrive in time.']
        : [400, 'The request is not valid HTTP.'];
  const requestId = newRequestId();
  const body = JSON.stringify({ error: { type: typeOfStatus(status), code: 'parameter_invalid', message, request_id: requestId } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Stops accepting connections and waits for in-flight requests to finish; each connection is
 * ended once it has no request left.
 */
export async function closeServer(server: Server): Promise<void> {
  closing.add(server);
  server.closeIdleConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
