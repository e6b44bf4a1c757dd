import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase, type Database } from '@pmatch/db';
import type { Express, RequestHandler } from 'express';
import { Redis, type RedisOptions } from 'ioredis';
import { Registry, collectDefaultMetrics, type Counter } from 'prom-client';
import type { z } from 'zod';
import { addressLimit, limitedRequestsCounter, type AddressLimitOptions } from './address-limit';
import { createAdminApp } from './admin-server';
import { Broker, type Handler } from './broker';
import { clockFromEnv, type Clock } from './clock';
import { ConfigError, type BaseConfig } from './config';
import { SERVICE_DATABASE_ROLES, checkDatabaseRole, type DatabaseRoleOwner } from './database-role';
import { closeServer, createHttpApp, finishHttpApp, httpServerLimits, listen, type HttpAppOptions } from './http';
import { runMain } from './lifecycle';
import { createLogger, type Logger } from './logger';
import { OutboxRelay } from './outbox-relay';
import { PeriodicTask } from './periodic-task';
import { RateLimiter, logRedisChanges } from './rate-limit';
import { servedPaths } from './served-paths';
import { registerBrokerConnected, registerDeadLetterDepth, registerOutboxAge } from './pipeline-metrics';
import { tracedRequests } from './tracing';

export interface ServiceOptions {
  /** The service's name: in every log line and in the AMQP connection name. */
  name: string;
  config: BaseConfig;
  /** The public HTTP port; 0 takes a free one. */
  port: number;
  /** The admin port (/healthz, /readyz, /metrics); 0 takes a free one. */
  adminPort: number;
  /** Where JSON bodies are parsed (`HttpAppOptions.bodies`). */
  bodies?: HttpAppOptions['bodies'];
  /**
   * The service takes its work while RabbitMQ is away: what it sends goes through the outbox, which
   * is published once the broker is back. Its /readyz then follows the database (and Redis if
   * required) but not the broker, whose state `pmatch_broker_connected` shows. Without it, /readyz
   * answers 503 while the broker is away.
   */
  readyWithoutBroker?: boolean;
}

/** Work that runs beside the entry points from start to stop (a poll loop, a scheduler). */
export interface Worker {
  start(): void;
  /** Finishes what it started; nothing new begins. */
  stop(): Promise<void>;
}

/**
 * How a service depends on Redis. `required`: it cannot work without it, so /readyz checks it and
 * a command waits for a reconnect. `best-effort`: a command fails at once while Redis is away, and
 * the service answers without it (a rate limit).
 */
export type RedisUse = 'required' | 'best-effort';

const REDIS_OPTIONS: Record<RedisUse, RedisOptions> = {
  required: { maxRetriesPerRequest: 3 },
  // Rate limits ask Redis on every API request: commands issued in the same tick go in one write
  // (a write per command was 12 % of orders-api's CPU under load: docs/decisions/0101-per-request-middleware-costs.md).
  'best-effort': { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true },
};

/** How long a service that requires Redis waits for its first connection before it listens anyway (not ready). */
const REDIS_START_WAIT_MS = 5_000;

/** Resolves once `redis` is connected, or after `ms` (it goes on connecting). */
function firstConnection(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/** How long /readyz waits for Redis's answer to a ping. */
const REDIS_READY_TIMEOUT_MS = 2_000;

export interface RunningService {
  port: number;
  adminPort: number;
  stop(): Promise<void>;
}

/**
 * What every service runs on: logger, database, broker, metrics, the public HTTP front, the admin
 * port with /healthz, /readyz and /metrics, and on request an outbox relay and Redis. A service
 * adds its routes, consumers and workers; `stop` ends them in dependency order (see `stop`).
 */
export class ServiceRuntime {
  readonly metrics = new Registry();
  /** The service's routes go here; the 404 and the error handler are added at `listen`. */
  readonly http: Express;
  private readonly readiness: Record<string, () => Promise<void>>;
  private relay: OutboxRelay | undefined;
  private redisClient: Redis | undefined;
  private limited: Counter<'limit' | 'decided_by'> | undefined;
  private redisRequired = false;
  private readonly stopConsumers: (() => Promise<void>)[] = [];
  private readonly consumedQueues: string[] = [];
  private readonly workers: Worker[] = [];
  private readonly closers: (() => unknown)[] = [];
  private server: Server | undefined;
  private adminServer: Server | undefined;
  private listening = false;

  private constructor(
    private readonly options: ServiceOptions,
    readonly logger: Logger,
    readonly database: Database,
    readonly broker: Broker,
  ) {
    collectDefaultMetrics({ register: this.metrics });
    registerDeadLetterDepth(this.metrics, broker, () => this.consumedQueues);
    registerBrokerConnected(this.metrics, broker);
    this.readiness = {
      database: async () => void (await database.prisma.$queryRaw`SELECT 1`),
      ...(options.readyWithoutBroker === true ? {} : { broker: () => broker.ping() }),
    };
    this.http = createHttpApp({
      logger,
      metrics: this.metrics,
      trustProxy: options.config.TRUST_PROXY,
      ...(options.bodies === undefined ? {} : { bodies: options.bodies }),
    });
    this.http.use(tracedRequests(logger));
  }

  /**
   * Opens the database pool and the broker connection. A lost connection ends no process: the
   * broker reconnects and consumes again by itself, the pool replaces connections, Redis reconnects,
   * and /readyz answers 503 meanwhile (for the broker, only without `readyWithoutBroker`). A broker
   * that cannot be reached at start is connected in the background the same way; one that refuses
   * (its user, its topology) fails the start. In production the database user must be the
   * service's own role (`checkDatabaseRole`).
   */
  static async connect(options: ServiceOptions): Promise<ServiceRuntime> {
    const { config } = options;
    const logger = createLogger(options.name, config.LOG_LEVEL);
    const database = createDatabase(config.DATABASE_URL, {
      poolSize: config.DATABASE_POOL_SIZE,
      onIdleConnectionError: (error) => logger.warn({ err: error }, 'idle database connection lost; the pool replaces it'),
    });
    try {
      if (config.NODE_ENV === 'production' && options.name in SERVICE_DATABASE_ROLES) {
        await checkDatabaseRole(database.prisma, options.name as DatabaseRoleOwner);
      }
      const broker = await Broker.connect(config.RABBITMQ_URL, config.AMQP_PREFIX, logger, { startWithoutBroker: true });
      return new ServiceRuntime(options, logger, database, broker);
    } catch (error) {
      await database.prisma.$disconnect();
      throw error;
    }
  }

  /** The service's outbox relay, made on first call; it publishes from `listen` on. */
  outboxRelay(): OutboxRelay {
    this.assertNotListening('outboxRelay');
    if (this.relay === undefined) {
      this.relay = new OutboxRelay(this.database, this.broker, this.logger, this.options.config.OUTBOX_POLL_INTERVAL_MS);
      registerOutboxAge(this.metrics, this.database);
    }
    return this.relay;
  }

  /** The service's Redis client, made on first call. */
  redis(use: RedisUse): Redis {
    this.assertNotListening('redis');
    if (this.redisClient === undefined) {
      const redis = new Redis(this.options.config.REDIS_URL, REDIS_OPTIONS[use]);
      this.redisClient = redis;
      // ioredis reconnects by itself; without a listener its 'error' events would end the process.
      // One line per outage, not one per reconnect attempt.
      let reported = false;
      redis.on('error', (error: Error) => {
        if (reported) return;
        reported = true;
        this.logger.warn({ err: error, use }, 'Redis unreachable; reconnecting');
      });
      redis.on('ready', () => {
        if (reported) this.logger.warn({ use }, 'Redis reachable again');
        reported = false;
      });
      if (use === 'required') {
        this.redisRequired = true;
        this.addReadinessCheck('redis', async () => {
          // While ioredis reconnects, a ping waits in its offline queue: not ready after two seconds (within the probes' 3 s timeout).
          const ping = redis.ping();
          ping.catch(() => undefined);
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new Error(`redis ${redis.status}`)), REDIS_READY_TIMEOUT_MS);
          });
          try {
            await Promise.race([ping, late]);
          } finally {
            clearTimeout(timer);
          }
        });
      }
    }
    return this.redisClient;
  }

  /**
   * A token bucket in the service's Redis (best effort: the process's own bucket decides while
   * Redis is down), its Redis changes logged.
   */
  rateLimiter(ratePerSecond: number, burst: number): RateLimiter {
    return new RateLimiter(this.redis('best-effort'), this.options.config.REDIS_PREFIX, ratePerSecond, burst, { onRedisChange: logRedisChanges(this.logger) });
  }

  /** A per-client-address limit (see `addressLimit`) counted in `pmatch_requests_limited_total`. */
  addressLimit(options: Omit<AddressLimitOptions, 'limited'>): RequestHandler {
    return addressLimit({ ...options, limited: this.limitedRequests() });
  }

  /** `pmatch_requests_limited_total`, the requests any rate limit of the service refused. */
  limitedRequests(): Counter<'limit' | 'decided_by'> {
    this.limited ??= limitedRequestsCounter(this.metrics);
    return this.limited;
  }

  /** Another dependency /readyz reports on; `check` throws when it is unusable. */
  addReadinessCheck(name: string, check: () => Promise<void>): void {
    this.readiness[name] = check;
  }

  /** Subscribes `handler` to `queue` now (see `Broker.consume`); it stops first at `stop`. */
  async consume<S extends z.ZodType>(queue: string, schema: S, handler: Handler<z.infer<S>>, options: { prefetch: number }): Promise<void> {
    this.stopConsumers.push(await this.broker.consume(queue, schema, handler, options));
    this.consumedQueues.push(queue);
  }

  /** Runs `run` every `intervalMs` from `listen` on (see `PeriodicTask`). */
  every(name: string, intervalMs: number, run: () => Promise<number>): PeriodicTask {
    const task = new PeriodicTask(name, run, intervalMs, this.logger);
    this.addWorker(task);
    return task;
  }

  /** Starts `worker` at `listen` and stops it after the entry points. */
  addWorker(worker: Worker): void {
    this.assertNotListening('addWorker');
    this.workers.push(worker);
  }

  /** Closes a resource of the service's own once its workers have stopped, before the relay and connections. */
  onStop(close: () => unknown): void {
    this.closers.push(close);
  }

  /** Starts the relay and the workers, then takes HTTP requests on the public and the admin port. */
  async listen(): Promise<{ port: number; adminPort: number }> {
    this.assertNotListening('listen');
    this.listening = true;
    // A service that requires Redis is ready once it is connected: give the first connection a
    // moment, so a service just started is not reported unready for a connection still opening.
    if (this.redisClient !== undefined && this.redisRequired) await firstConnection(this.redisClient, REDIS_START_WAIT_MS);
    this.relay?.start();
    for (const worker of this.workers) worker.start();
    finishHttpApp(this.http, this.logger);
    const limits = httpServerLimits(this.options.config);
    this.server = await listen(this.http, this.options.port, undefined, limits);
    this.adminServer = await listen(
      createAdminApp({ logger: this.logger, metrics: this.metrics, readiness: this.readiness }),
      this.options.adminPort,
      undefined,
      limits,
    );
    const { port } = this.server.address() as AddressInfo;
    const { port: adminPort } = this.adminServer.address() as AddressInfo;
    this.logger.info({ port, adminPort, publicPaths: servedPaths(this.http) }, `${this.options.name} listening`);
    return { port, adminPort };
  }

  /**
   * Stops taking work, then lets what was taken finish: the HTTP server (in-flight requests
   * answered), consumers (in-flight messages handled), workers, the service's own resources, the
   * relay (what was handed over published), the admin port (scraped until then), then the broker,
   * Redis and the database.
   */
  async stop(): Promise<void> {
    if (this.server !== undefined) await closeServer(this.server);
    for (const stopConsumer of this.stopConsumers) await stopConsumer();
    for (const worker of this.workers) await worker.stop();
    for (const close of this.closers) await close();
    await this.relay?.stop();
    if (this.adminServer !== undefined) await closeServer(this.adminServer);
    await this.broker.close();
    this.redisClient?.disconnect();
    await this.database.prisma.$disconnect();
  }

  private assertNotListening(what: string): void {
    if (this.listening) throw new Error(`${what} must be called before the service listens`);
  }
}

/**
 * Connects a runtime, lets `setUp` add what is particular to the service, and listens. Resolves
 * with the ports, `stop`, and whatever `setUp` returned; a failed start closes what it opened.
 */
export async function startService<T extends object = object>(
  options: ServiceOptions,
  setUp: (runtime: ServiceRuntime) => Promise<T> | T,
): Promise<RunningService & T> {
  const runtime = await ServiceRuntime.connect(options);
  try {
    const extra = await setUp(runtime);
    const ports = await runtime.listen();
    return { ...extra, ...ports, stop: () => runtime.stop() };
  } catch (error) {
    await runtime.stop().catch(() => undefined);
    throw error;
  }
}

/** A service's process entry: loads its configuration and runs it until SIGTERM or SIGINT (`runMain`). */
export function runService<C extends BaseConfig>(name: string, loadConfig: () => C, start: (config: C, clock: Clock) => Promise<RunningService>): void {
  let config: C;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // One clear line for whoever reads the container's log: which variables, and why.
    process.stderr.write(`${name} refuses its configuration: ${error.message}\n`);
    process.exit(1);
  }
  runMain(name, createLogger(name, config.LOG_LEVEL), () => start(config, clockFromEnv()));
}
