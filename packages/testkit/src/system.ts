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

/** How many processes of each service a TestSystem runs (1 unless given). */
export type Replicas = Partial<Record<ServiceName, number>>;

export interface TestSystemOptions {
  replicas?: Replicas;
}

/** A replica's name in logs and in `replicaPids()`: the service's, with `#n` when it runs several. */
export type ReplicaLabel = ServiceName | `${ServiceName}#${number}`;

/** Restart backoff of the supervisor: short, because tests wait on it, and doubling like start-all's. */
const SUPERVISOR_BACKOFF_START_MS = 200;
const SUPERVISOR_BACKOFF_MAX_MS = 2_000;

interface Supervisor {
  /** Per replica (its label). */
  timers: Map<string, NodeJS.Timeout>;
  backoffMs: Map<string, number>;
  /** Per service, every replica's counted. */
  exits: Map<ServiceName, number>;
  restarts: Map<ServiceName, number>;
  /** The end of the output of each process that exited on its own, with how it ended. */
  exitedOutput: Map<ServiceName, string[]>;
}

/**
 * The four services as real processes (built code), on a database, an AMQP name prefix and a Redis
 * key prefix of their own. Tests talk to them only over HTTP, the ops CLI and the broker. A service
 * may run as several replicas (numbered from 1, each on ports of its own); a method given only a
 * service acts on every replica of it, and its URLs are replica 1's.
 */
export class TestSystem {
  /** Each service's replicas, replica n at index n - 1 (undefined until it was first started). */
  private readonly services = new Map<ServiceName, (RunningService | undefined)[]>();
  private supervisor: Supervisor | undefined;
  private stopping = false;
  private opsSession: OpsSession | undefined;

  private constructor(
    readonly database: TestDatabase,
    /** The services' environment, with replica 1's ports. */
    readonly env: Record<string, string>,
    /** Each process's broker URL: its own user where this broker has them (`brokerUrlFor`). */
    readonly brokerUrls: Record<ServiceName | 'ops', string>,
    /** The public and admin port of each replica of each service, replica n at index n - 1. */
    private readonly ports: Record<ServiceName, { port: number; adminPort: number }[]>,
  ) {}

  /** Starts the services (`options.replicas`: how many processes of each, 1 unless given) and resolves once every one is ready. */
  static async start(extraEnv: Record<string, string> = {}, options: TestSystemOptions = {}): Promise<TestSystem> {
    const counts = SERVICES.map((s) => {
      const n = options.replicas?.[s] ?? 1;
      if (!Number.isInteger(n) || n < 1) throw new Error(`replicas of ${s} must be a whole number from 1, not ${n}`);
      return [s, n] as const;
    });
    const database = await createTestDatabase();
    const prefix = `${uniqueName('t')}.`;
    const replicaPorts = Object.fromEntries(
      await Promise.all(
        counts.map(async ([s, n]) => [s, await Promise.all(Array.from({ length: n }, async () => ({ port: await freePort(), adminPort: await freePort() })))]),
      ),
    ) as Record<ServiceName, { port: number; adminPort: number }[]>;
    const ports = Object.fromEntries(
      SERVICES.flatMap((s) => [
        [PORT_VARIABLE[s], String(replicaPorts[s][0]!.port)],
        [ADMIN_PORT_VARIABLE[s], String(replicaPorts[s][0]!.adminPort)],
      ]),
    );
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
    const system = new TestSystem(database, env, brokerUrls, replicaPorts);
    try {
      // As the migrate step does in a deployment: the services' own users may not declare it.
      await Broker.declareTopology(await urlFor('topology'), prefix);
      // Every service's first replica, then the others: no more processes start at once than with one of each.
      await Promise.all(SERVICES.map((s) => system.startService(s, 1)));
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

  /** How many processes of the service this system runs. */
  replicas(service: ServiceName): number {
    return this.ports[service].length;
  }

  /** The public URL of one replica of the service (replica 1 unless given). */
  url(service: ServiceName, replica = 1): string {
    return `http://127.0.0.1:${this.portsOf(service, replica).port}`;
  }

  /** Where one replica of the service (replica 1 unless given) answers /healthz, /readyz and /metrics. */
  adminUrl(service: ServiceName, replica = 1): string {
    return `http://127.0.0.1:${this.portsOf(service, replica).adminPort}`;
  }

  /** One replica's /metrics (replica 1 unless given), as Prometheus reads it. */
  async metrics(service: ServiceName, replica = 1): Promise<string> {
    return (await fetch(`${this.adminUrl(service, replica)}/metrics`)).text();
  }

  /** orders-api's replica 1, which PUBLIC_BASE_URL names. */
  get apiUrl(): string {
    return this.url('orders-api');
  }

  private portsOf(service: ServiceName, replica: number): { port: number; adminPort: number } {
    const ports = this.ports[service][replica - 1];
    if (!ports) throw new Error(`${service} has ${this.replicas(service)} replica(s), not a replica ${replica}`);
    return ports;
  }

  /** Every replica of every service, in order, each with its label. */
  everyReplica(): { service: ServiceName; replica: number; label: ReplicaLabel }[] {
    return SERVICES.flatMap((service) => this.replicaNumbers(service, undefined).map((replica) => ({ service, replica, label: this.label(service, replica) })));
  }

  private label(service: ServiceName, replica: number): ReplicaLabel {
    return this.replicas(service) === 1 ? service : `${service}#${replica}`;
  }

  /** The replica numbers a call names: the one given, else every replica of the service. */
  private replicaNumbers(service: ServiceName, replica: number | undefined): number[] {
    if (replica !== undefined) {
      this.portsOf(service, replica);
      return [replica];
    }
    return Array.from({ length: this.replicas(service) }, (_, i) => i + 1);
  }

  private running(service: ServiceName, replica: number): RunningService | undefined {
    return this.services.get(service)?.[replica - 1];
  }

  /**
   * Starts one replica of the service, or without `replica` every replica, and resolves once each
   * answers /readyz with 200; a replica already running is left as it is.
   */
  async startService(name: ServiceName, replica?: number): Promise<void> {
    const numbers = this.replicaNumbers(name, replica).filter((n) => !isRunning(this.running(name, n)));
    await Promise.all(numbers.map((n) => this.startReplica(name, n)));
  }

  private async startReplica(name: ServiceName, replica: number): Promise<void> {
    const label = this.label(name, replica);
    clearTimeout(this.supervisor?.timers.get(label));
    this.supervisor?.timers.delete(label);
    const { port, adminPort } = this.portsOf(name, replica);
    const child = spawn(process.execPath, [join(REPO_ROOT, 'services', name, 'dist', 'main.js')], {
      env: {
        ...process.env,
        ...this.env,
        [PORT_VARIABLE[name]]: String(port),
        [ADMIN_PORT_VARIABLE[name]]: String(adminPort),
        DATABASE_URL: databaseUrlAs(this.env.DATABASE_URL!, DATABASE_ROLE[name]),
        RABBITMQ_URL: this.brokerUrls[name],
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const running: RunningService = { process: child, port, output: [], stoppedOnPurpose: false };
    const keep = (chunk: Buffer) => {
      running.output.push(chunk.toString('utf8'));
      if (running.output.length > 500) running.output.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const replicas = this.services.get(name) ?? [];
    replicas[replica - 1] = running;
    this.services.set(name, replicas);
    child.once('exit', () => this.exited(name, replica, running));
    const url = `${this.adminUrl(name, replica)}/readyz`;
    let lastAnswer = 'none';
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${label} exited with ${child.exitCode}:\n${running.output.join('')}`);
        const res = await fetch(url).catch((error: unknown) => String(error));
        if (typeof res === 'string' || res.status !== 200) lastAnswer = typeof res === 'string' ? res : `${res.status} ${await res.text()}`;
        return typeof res !== 'string' && res.status === 200 ? true : undefined;
      },
      // A deadline, not a wait: generous because a test system's processes start on a shared machine.
      { timeoutMs: 60_000, what: `${label} to be ready` },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; its last /readyz answer: ${lastAnswer}; its output:\n${running.output.join('').slice(-5_000)}`);
    });
  }

  /**
   * From now on, a replica that exits on its own (a crash, or a failed start) is started again
   * with backoff, as scripts/start-all.mjs or an orchestrator does. One stopped through kill(), terminate() or stop() is left down.
   */
  supervise(): void {
    this.supervisor ??= { timers: new Map(), backoffMs: new Map(), exits: new Map(), restarts: new Map(), exitedOutput: new Map() };
  }

  /** The process id of each service's current process, replica 1's where it runs several (undefined for one not running). */
  pids(): Record<ServiceName, number | undefined> {
    return Object.fromEntries(SERVICES.map((s) => [s, this.running(s, 1)?.process.pid])) as Record<ServiceName, number | undefined>;
  }

  /** The process id of every replica's current process, by its label (`matcher`, or `matcher#2` of several). */
  replicaPids(): Partial<Record<ReplicaLabel, number | undefined>> {
    return Object.fromEntries(this.everyReplica().map((r) => [r.label, this.running(r.service, r.replica)?.process.pid]));
  }

  /** How often each service's replicas exited on their own, and how often the supervisor started one again. */
  supervision(): Record<ServiceName, { exits: number; restarts: number }> {
    return Object.fromEntries(
      SERVICES.map((s) => [s, { exits: this.supervisor?.exits.get(s) ?? 0, restarts: this.supervisor?.restarts.get(s) ?? 0 }]),
    ) as Record<ServiceName, { exits: number; restarts: number }>;
  }

  /** Resolves once every replica of every service runs and answers /readyz with 200 (after a restart or an outage). */
  async ready(timeoutMs = 60_000): Promise<void> {
    await waitFor(
      async () => {
        const answers = await Promise.all(
          SERVICES.flatMap((s) =>
            this.replicaNumbers(s, undefined).map(async (n) => {
              if (!isRunning(this.running(s, n))) return false;
              const res = await fetch(`${this.adminUrl(s, n)}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
              return res?.status === 200;
            }),
          ),
        );
        if (answers.every(Boolean)) return true;
        // Each /readyz pings the database, the broker and Redis: polling it gently spares a recovering system.
        await new Promise((resolve) => setTimeout(resolve, 200));
        return undefined;
      },
      { timeoutMs, what: 'every service to be ready' },
    );
  }

  private exited(name: ServiceName, replica: number, running: RunningService): void {
    const supervisor = this.supervisor;
    if (!supervisor || this.stopping || running.stoppedOnPurpose || this.running(name, replica) !== running) return;
    const label = this.label(name, replica);
    supervisor.exits.set(name, (supervisor.exits.get(name) ?? 0) + 1);
    const how = running.process.signalCode ?? `code ${running.process.exitCode}`;
    const who = label === name ? '' : ` ${label}`;
    const kept = [...(supervisor.exitedOutput.get(name) ?? []), `--- exited on its own (${how})${who}:\n${running.output.join('').slice(-20_000)}`];
    supervisor.exitedOutput.set(name, kept.slice(-5));
    const delay = supervisor.backoffMs.get(label) ?? SUPERVISOR_BACKOFF_START_MS;
    supervisor.backoffMs.set(label, Math.min(delay * 2, SUPERVISOR_BACKOFF_MAX_MS));
    clearTimeout(supervisor.timers.get(label));
    supervisor.timers.set(
      label,
      setTimeout(() => void this.restart(name, replica), delay),
    );
  }

  private async restart(name: ServiceName, replica: number): Promise<void> {
    const supervisor = this.supervisor;
    if (!supervisor || this.stopping) return;
    const label = this.label(name, replica);
    supervisor.timers.delete(label);
    supervisor.restarts.set(name, (supervisor.restarts.get(name) ?? 0) + 1);
    try {
      await this.startReplica(name, replica);
      supervisor.backoffMs.delete(label);
    } catch {
      // It exited before it was ready (exited() has scheduled the next try), or it hangs unready:
      // then it is killed like a failed liveness probe would, and exited() takes it from there.
      const running = this.running(name, replica);
      if (running && isRunning(running)) running.process.kill('SIGKILL');
    }
  }

  /** Stops one replica of a service, or without `replica` every replica of it, the hard way (SIGKILL), as a crash would. */
  async kill(name: ServiceName, replica?: number): Promise<void> {
    await this.signal(name, replica, 'SIGKILL');
  }

  /**
   * Stops one replica, or every replica, as an orchestrator does (SIGTERM) and resolves once they
   * are gone with the exit code: the first replica's that is not 0, else 0.
   */
  async terminate(name: ServiceName, replica?: number): Promise<number | null> {
    return this.signal(name, replica, 'SIGTERM');
  }

  private async signal(name: ServiceName, replica: number | undefined, signal: NodeJS.Signals): Promise<number | null> {
    const codes = await Promise.all(
      this.replicaNumbers(name, replica).map((n) => {
        const running = this.running(name, n);
        if (!running || !isRunning(running)) return running?.process.exitCode ?? null;
        running.stoppedOnPurpose = true;
        const exited = new Promise<number | null>((resolve) => running.process.once('exit', (code) => resolve(code)));
        running.process.kill(signal);
        return exited;
      }),
    );
    return codes.find((code) => code !== 0) ?? codes[0]!;
  }

  /** The output of one replica's current process, or of every replica's (each after a `--- <label>` line where there are several). */
  logs(name: ServiceName, replica?: number): string {
    const numbers = this.replicaNumbers(name, replica);
    const output = (n: number) => this.running(name, n)?.output.join('') ?? '';
    if (numbers.length === 1) return output(numbers[0]!);
    return numbers.map((n) => `--- ${this.label(name, n)}\n${output(n)}`).join('\n');
  }

  /** Under supervise(): the last output of the (at most five) latest processes of a service's replicas that exited on their own. */
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
      [...this.services.values()].flat().map(async (s) => {
        if (!s || !isRunning(s)) return;
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

function isRunning(running: RunningService | undefined): boolean {
  return running !== undefined && running.process.exitCode === null && running.process.signalCode === null;
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
