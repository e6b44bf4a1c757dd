import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker, createLogger } from '@pmatch/platform';
import amqp from 'amqplib';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { MerchantClient } from './merchant';
import { useServedDocument } from './openapi-validator';
import { brokerUrlFor } from './broker-users';
import { RABBITMQ_URL, REDIS_URL, createTestDatabase, freePort, uniqueName, waitFor, type TestDatabase } from './infra';

export const REPO_ROOT = join(__dirname, '..', '..', '..');

/** The part of packages/ops's built session the test system uses (read from dist: ops depends on the test kit for its own tests). */
interface OpsSession {
  execute(argv: readonly string[]): Promise<{ exitCode: 0; stdout: string } | { exitCode: number; stderr: string }>;
  close(): Promise<void>;
}
const opsModule = (): { OpsSession: new (env: NodeJS.ProcessEnv) => OpsSession } =>
  createRequire(__filename)(join(REPO_ROOT, 'packages', 'ops', 'dist', 'session.js')) as { OpsSession: new (env: NodeJS.ProcessEnv) => OpsSession };

export const SERVICES = ['orders-api', 'bank-ingest', 'matcher', 'webhook-dispatcher'] as const;
export type ServiceName = (typeof SERVICES)[number];

const PORT_VARIABLE: Record<ServiceName, string> = {
  'orders-api': 'ORDERS_API_PORT',
  'bank-ingest': 'BANK_INGEST_PORT',
  matcher: 'MATCHER_PORT',
  'webhook-dispatcher': 'WEBHOOK_DISPATCHER_PORT',
};

/** Each service's admin port (/healthz, /readyz, /metrics). */
const ADMIN_PORT_VARIABLE: Record<ServiceName, string> = {
  'orders-api': 'ORDERS_API_ADMIN_PORT',
  'bank-ingest': 'BANK_INGEST_ADMIN_PORT',
  matcher: 'MATCHER_ADMIN_PORT',
  'webhook-dispatcher': 'WEBHOOK_DISPATCHER_ADMIN_PORT',
};

/** The database role each process connects as (migration 20261122020000_service_roles). */
export const DATABASE_ROLE: Record<ServiceName | 'ops', string> = {
  'orders-api': 'pmatch_orders_api',
  'bank-ingest': 'pmatch_bank_ingest',
  matcher: 'pmatch_matcher',
  'webhook-dispatcher': 'pmatch_webhook_dispatcher',
  ops: 'pmatch_ops',
};

export function databaseUrlAs(url: string, role: string): string {
  const withRole = new URL(url);
  withRole.username = role;
  withRole.password = '';
  return withRole.toString();
}

export interface SqlSession {
  query<T extends Record<string, unknown> = Record<string, any>>(text: string, values?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

interface RunningService {
  process: ChildProcess;
  port: number;
  output: string[];
  /** Stopped by the test (kill, terminate, stop): a supervisor leaves it down. */
  stoppedOnPurpose: boolean;
}

/** Restart backoff of the supervisor: short, because tests wait on it, and doubling like start-all's. */
const SUPERVISOR_BACKOFF_START_MS = 200;
const SUPERVISOR_BACKOFF_MAX_MS = 2_000;

interface Supervisor {
  timers: Map<ServiceName, NodeJS.Timeout>;
  backoffMs: Map<ServiceName, number>;
  exits: Map<ServiceName, number>;
  restarts: Map<ServiceName, number>;
  /** The end of the output of each process that exited on its own, with how it ended. */
  exitedOutput: Map<ServiceName, string[]>;
}

/**
 * The four services as real processes (built code), on a database, an AMQP name prefix and a Redis
 * key prefix of their own. Tests talk to them only over HTTP, the ops CLI and the broker.
 */
export class TestSystem {
  private readonly services = new Map<ServiceName, RunningService>();
  private supervisor: Supervisor | undefined;
  private stopping = false;
  private opsSession: OpsSession | undefined;

  private constructor(
    readonly database: TestDatabase,
    readonly env: Record<string, string>,
    /** Each process's broker URL: its own user where this broker has them (`brokerUrlFor`). */
    readonly brokerUrls: Record<ServiceName | 'ops', string>,
  ) {}

  static async start(extraEnv: Record<string, string> = {}): Promise<TestSystem> {
    const database = await createTestDatabase();
    const prefix = `${uniqueName('t')}.`;
    const variables = [...SERVICES.map((s) => PORT_VARIABLE[s]), ...SERVICES.map((s) => ADMIN_PORT_VARIABLE[s])];
    const ports = Object.fromEntries(await Promise.all(variables.map(async (v) => [v, String(await freePort())])));
    const clockFile = join(mkdtempSync(join(tmpdir(), 'pmatch-clock-')), 'offset-ms');
    writeFileSync(clockFile, '0');
    const env: Record<string, string> = {
      NODE_ENV: 'test',
      TEST_CLOCK_FILE: clockFile,
      // E-mails of a system without SMTP_URL land beside its clock, removed with it.
      MAIL_DIR: join(clockFile, '..', 'mail'),
      EXPIRY_SWEEP_INTERVAL_MS: '100',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      DATABASE_URL: database.url,
      DATABASE_POOL_SIZE: '5',
      RABBITMQ_URL,
      AMQP_PREFIX: prefix,
      REDIS_URL,
      REDIS_PREFIX: `pmatch-test:${prefix}`,
      PUBLIC_BASE_URL: `http://127.0.0.1:${ports.ORDERS_API_PORT}`,
      SECRETS_KEY: 'test-secrets-key-0123456789',
      OUTBOX_POLL_INTERVAL_MS: '50',
      // Tests send many requests, refused ones among them, from one address; the limits per
      // address are tested with lower ones.
      REFUSAL_LIMIT_PER_SECOND: '1000000',
      REFUSAL_LIMIT_BURST: '1000000',
      CONSOLE_LIMIT_PER_SECOND: '1000000',
      CONSOLE_LIMIT_BURST: '1000000',
      // A request no cached secret verifies re-reads the adapters at once: an adapter a test has
      // just created is known to bank-ingest from its first request.
      ADAPTER_MISS_REFRESH_MS: '0',
      ...ports,
      ...extraEnv,
    };
    const names = [...SERVICES, 'ops'] as const;
    // A test that gives RABBITMQ_URL means every process to use it.
    const urlFor = (who: ServiceName | 'ops' | 'topology') =>
      extraEnv.RABBITMQ_URL === undefined ? brokerUrlFor(who) : Promise.resolve(extraEnv.RABBITMQ_URL);
    const brokerUrls = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await urlFor(n)]))) as Record<ServiceName | 'ops', string>;
    const system = new TestSystem(database, env, brokerUrls);
    try {
      // As the migrate step does in a deployment: the services' own users may not declare it.
      await Broker.declareTopology(await urlFor('topology'), prefix);
      await Promise.all(SERVICES.map((s) => system.startService(s)));
      // Every response the tests see is checked against what merchants read: the served document.
      await useServedDocument(system.apiUrl);
    } catch (error) {
      await system.stop();
      throw error;
    }
    return system;
  }

  /** Moves the time of every service (and of the ops CLI) forward, as if that much time passed. */
  advanceClock(ms: number): void {
    const file = this.env.TEST_CLOCK_FILE!;
    writeFileSync(file, String(Number(readFileSync(file, 'utf8')) + ms));
  }

  /** The services' current time. */
  now(): Date {
    return new Date(Date.now() + Number(readFileSync(this.env.TEST_CLOCK_FILE!, 'utf8')));
  }

  url(service: ServiceName): string {
    return `http://127.0.0.1:${this.env[PORT_VARIABLE[service]]}`;
  }

  /** Where the service answers /healthz, /readyz and /metrics. */
  adminUrl(service: ServiceName): string {
    return `http://127.0.0.1:${this.env[ADMIN_PORT_VARIABLE[service]]}`;
  }

  /** The service's /metrics, as Prometheus reads it. */
  async metrics(service: ServiceName): Promise<string> {
    return (await fetch(`${this.adminUrl(service)}/metrics`)).text();
  }

  get apiUrl(): string {
    return this.url('orders-api');
  }

  async startService(name: ServiceName): Promise<void> {
    clearTimeout(this.supervisor?.timers.get(name));
    this.supervisor?.timers.delete(name);
    const child = spawn(process.execPath, [join(REPO_ROOT, 'services', name, 'dist', 'main.js')], {
      env: { ...process.env, ...this.env, DATABASE_URL: databaseUrlAs(this.env.DATABASE_URL!, DATABASE_ROLE[name]), RABBITMQ_URL: this.brokerUrls[name] },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const running: RunningService = { process: child, port: Number(this.env[PORT_VARIABLE[name]]), output: [], stoppedOnPurpose: false };
    const keep = (chunk: Buffer) => {
      running.output.push(chunk.toString('utf8'));
      if (running.output.length > 500) running.output.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.services.set(name, running);
    child.once('exit', () => this.exited(name, running));
    const url = `${this.adminUrl(name)}/readyz`;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${running.output.join('')}`);
        const res = await fetch(url).catch(() => undefined);
        return res?.status === 200 ? true : undefined;
      },
      { timeoutMs: 30_000, what: `${name} to be ready` },
    );
  }

  /**
   * From now on, a service that exits on its own (a crash, or a failed start) is started again
   * with backoff, as scripts/start-all.mjs or an orchestrator does. A service stopped through kill(), terminate() or stop() is left down.
   */
  supervise(): void {
    this.supervisor ??= { timers: new Map(), backoffMs: new Map(), exits: new Map(), restarts: new Map(), exitedOutput: new Map() };
  }

  /** The process id of each service's current process (undefined for one not running). */
  pids(): Record<ServiceName, number | undefined> {
    return Object.fromEntries(SERVICES.map((s) => [s, this.services.get(s)?.process.pid])) as Record<ServiceName, number | undefined>;
  }

  /** How often each service exited on its own, and how often the supervisor started it again. */
  supervision(): Record<ServiceName, { exits: number; restarts: number }> {
    return Object.fromEntries(
      SERVICES.map((s) => [s, { exits: this.supervisor?.exits.get(s) ?? 0, restarts: this.supervisor?.restarts.get(s) ?? 0 }]),
    ) as Record<ServiceName, { exits: number; restarts: number }>;
  }

  /** Resolves once every service runs and answers /readyz with 200 (after a restart or an outage). */
  async ready(timeoutMs = 60_000): Promise<void> {
    await waitFor(
      async () => {
        const answers = await Promise.all(
          SERVICES.map(async (s) => {
            const running = this.services.get(s);
            if (!running || running.process.exitCode !== null || running.process.signalCode !== null) return false;
            const res = await fetch(`${this.adminUrl(s)}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
            return res?.status === 200;
          }),
        );
        if (answers.every(Boolean)) return true;
        // Each /readyz pings the database, the broker and Redis: polling it gently spares a recovering system.
        await new Promise((resolve) => setTimeout(resolve, 200));
        return undefined;
      },
      { timeoutMs, what: 'every service to be ready' },
    );
  }

  private exited(name: ServiceName, running: RunningService): void {
    const supervisor = this.supervisor;
    if (!supervisor || this.stopping || running.stoppedOnPurpose || this.services.get(name) !== running) return;
    supervisor.exits.set(name, (supervisor.exits.get(name) ?? 0) + 1);
    const how = running.process.signalCode ?? `code ${running.process.exitCode}`;
    const kept = [...(supervisor.exitedOutput.get(name) ?? []), `--- exited on its own (${how}):\n${running.output.join('').slice(-20_000)}`];
    supervisor.exitedOutput.set(name, kept.slice(-5));
    const delay = supervisor.backoffMs.get(name) ?? SUPERVISOR_BACKOFF_START_MS;
    supervisor.backoffMs.set(name, Math.min(delay * 2, SUPERVISOR_BACKOFF_MAX_MS));
    clearTimeout(supervisor.timers.get(name));
    supervisor.timers.set(
      name,
      setTimeout(() => void this.restart(name), delay),
    );
  }

  private async restart(name: ServiceName): Promise<void> {
    const supervisor = this.supervisor;
    if (!supervisor || this.stopping) return;
    supervisor.timers.delete(name);
    supervisor.restarts.set(name, (supervisor.restarts.get(name) ?? 0) + 1);
    try {
      await this.startService(name);
      supervisor.backoffMs.delete(name);
    } catch {
      // It exited before it was ready (exited() has scheduled the next try), or it hangs unready:
      // then it is killed like a failed liveness probe would, and exited() takes it from there.
      const running = this.services.get(name);
      if (running && running.process.exitCode === null && running.process.signalCode === null) running.process.kill('SIGKILL');
    }
  }

  /** Stops a service the hard way (SIGKILL), as a crash would. */
  async kill(name: ServiceName): Promise<void> {
    await this.signal(name, 'SIGKILL');
  }

  /** Stops a service as an orchestrator does (SIGTERM) and resolves with its exit code once it is gone. */
  async terminate(name: ServiceName): Promise<number | null> {
    return this.signal(name, 'SIGTERM');
  }

  private async signal(name: ServiceName, signal: NodeJS.Signals): Promise<number | null> {
    const running = this.services.get(name);
    if (!running || running.process.exitCode !== null || running.process.signalCode !== null) return running?.process.exitCode ?? null;
    running.stoppedOnPurpose = true;
    const exited = new Promise<number | null>((resolve) => running.process.once('exit', (code) => resolve(code)));
    running.process.kill(signal);
    return exited;
  }

  logs(name: ServiceName): string {
    return this.services.get(name)?.output.join('') ?? '';
  }

  /** Under supervise(): the last output of the (at most five) latest processes of a service that exited on their own. */
  exitedLogs(name: ServiceName): string {
    return (this.supervisor?.exitedOutput.get(name) ?? []).join('\n');
  }

  /** Reads this system's database directly: for asserting what the API cannot show. */
  async sql<T extends Record<string, unknown> = Record<string, any>>(text: string, values: unknown[] = []): Promise<T[]> {
    const client = new Client({ connectionString: this.database.url });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /**
   * One connection to this system's database, kept open for many reads (a fuzzer reads after
   * every case, where opening a connection per read would cost more than the request itself).
   */
  async sqlSession(): Promise<SqlSession> {
    const client = new Client({ connectionString: this.database.url });
    await client.connect();
    // Callers read concurrently (fuzzers run several endpoints at once); one connection runs one
    // query at a time, so each waits for the one before it instead of relying on pg's queue,
    // which is deprecated.
    let previous: Promise<unknown> = Promise.resolve();
    return {
      query: <T extends Record<string, unknown>>(text: string, values: unknown[] = []) => {
        const rows = previous.then(async () => (await client.query<T>(text, values)).rows);
        previous = rows.catch(() => undefined);
        return rows;
      },
      close: async () => {
        await previous;
        await client.end();
      },
    };
  }

  /** A queue of this system's broker (name without the prefix): messages ready in it, and its consumers. */
  async queueState(queue: string): Promise<{ ready: number; consumers: number }> {
    const connection = await amqp.connect(RABBITMQ_URL);
    try {
      const channel = await connection.createChannel();
      const { messageCount, consumerCount } = await channel.checkQueue(`${this.env.AMQP_PREFIX}${queue}`);
      return { ready: messageCount, consumers: consumerCount };
    } finally {
      await connection.close();
    }
  }

  /** Waits until a consumer has processed a message (its inbox row exists). */
  async processed(consumer: string, messageId: string): Promise<void> {
    await waitFor(
      async () => {
        const rows = await this.sql('SELECT 1 FROM inbox WHERE consumer = $1 AND message_id = $2', [consumer, messageId]);
        return rows.length > 0 ? true : undefined;
      },
      { what: `${consumer} to process ${messageId}` },
    );
  }

  /**
   * Runs an ops command line against this system's database, in this process through the CLI's
   * own session (a process per command costs a second or more), and resolves with its one JSON
   * object; rejects with its JSON error when it exits non-zero. Tests of the CLI as a process
   * (exit codes, stdout) spawn it themselves.
   */
  async ops(...args: string[]): Promise<Record<string, unknown>> {
    this.opsSession ??= new (opsModule().OpsSession)({
      ...process.env,
      ...this.env,
      DATABASE_URL: databaseUrlAs(this.env.DATABASE_URL!, DATABASE_ROLE.ops),
      RABBITMQ_URL: this.brokerUrls.ops,
    });
    const outcome = await this.opsSession.execute(args);
    if (!('stdout' in outcome)) throw new Error(`ops ${args.join(' ')} exited ${outcome.exitCode}: ${outcome.stderr.trim()}`);
    return JSON.parse(outcome.stdout) as Record<string, unknown>;
  }

  /** `ops bank-account add` of a live account (bank 0001, branch 001, ordinary unless given); resolves with the account as printed. */
  async addLiveBankAccount(
    orgId: string,
    fields: { number: string; holder?: string; bank?: string; branch?: string; type?: string },
  ): Promise<Record<string, unknown>> {
    const flags = { bank: '0001', branch: '001', type: 'ordinary', holder: 'ﾃｽﾄｼﾖｳﾃﾝ', ...fields };
    return this.ops(
      ...['bank-account', 'add', '--org', orgId, '--mode', 'live', '--bank-code', flags.bank, '--branch-code', flags.branch],
      ...['--account-type', flags.type, '--account-number', flags.number, '--holder-name', flags.holder],
    );
  }

  /** An organisation with a test key (which also creates its test bank account). */
  async createMerchant(options: { name?: string } = {}): Promise<{ orgId: string; testKey: string; client: MerchantClient }> {
    const org = await this.ops('org', 'create', '--name', options.name ?? 'テスト商店', '--owner-email', 'owner@example.com');
    const key = await this.ops('key', 'issue', '--org', String(org.id), '--mode', 'test', '--name', 'server');
    return { orgId: String(org.id), testKey: String(key.key), client: new MerchantClient(this.apiUrl, String(key.key)) };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.opsSession?.close();
    for (const timer of this.supervisor?.timers.values() ?? []) clearTimeout(timer);
    await Promise.all(
      [...this.services.values()].map(async (s) => {
        if (s.process.exitCode !== null || s.process.signalCode !== null) return;
        const exited = new Promise((resolve) => s.process.once('exit', resolve));
        s.process.kill('SIGTERM');
        await exited;
      }),
    );
    await cleanUpBroker(this.env.AMQP_PREFIX!).catch(() => undefined);
    await cleanUpRedis(this.env.REDIS_PREFIX!).catch(() => undefined);
    await this.database.drop();
    rmSync(join(this.env.TEST_CLOCK_FILE!, '..'), { recursive: true, force: true });
  }
}

/** Deletes the exchanges and queues declared under an AMQP name prefix. */
export async function cleanUpBroker(prefix: string): Promise<void> {
  const broker = await Broker.connect(RABBITMQ_URL, prefix, createLogger('test-cleanup', 'silent'));
  try {
    await broker.deleteTopology();
  } finally {
    await broker.close();
  }
}

async function cleanUpRedis(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
