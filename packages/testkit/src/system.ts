import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Broker } from '@pmatch/platform';
import { MerchantClient } from './merchant';
import { cleanUpBroker, cleanUpRedis, openSqlSession, queryOnce, queueStateOf, type SqlSession } from './system-access';
import { ReplicaSupervisor, isRunning, type ServiceProcess } from './system-supervisor';
import { useServedDocument } from './openapi-validator';
import { brokerUrlFor } from './broker-users';
import { createTestDatabase, uniqueName, waitFor, type TestDatabase } from './infra';
import {
  ADMIN_PORT_VARIABLE,
  DATABASE_ROLE,
  PORT_VARIABLE,
  SERVICES,
  databaseUrlAs,
  replicaPortsFor,
  testEnvironment,
  type ReplicaLabel,
  type Replicas,
  type ServiceName,
} from './system-environment';

export * from './system-environment';
export { cleanUpBroker, type SqlSession } from './system-access';

export const REPO_ROOT = join(__dirname, '..', '..', '..');

/** The part of packages/ops's built session the test system uses (read from dist: ops depends on the test kit for its own tests). */
interface OpsSession {
  execute(argv: readonly string[]): Promise<{ exitCode: 0; stdout: string } | { exitCode: number; stderr: string }>;
  close(): Promise<void>;
}
const opsModule = (): { OpsSession: new (env: NodeJS.ProcessEnv) => OpsSession } =>
  createRequire(__filename)(join(REPO_ROOT, 'packages', 'ops', 'dist', 'session.js')) as { OpsSession: new (env: NodeJS.ProcessEnv) => OpsSession };

export interface TestSystemOptions {
  replicas?: Replicas;
}

/**
 * The four services as real processes (built code), on a database, an AMQP name prefix and a Redis
 * key prefix of their own. Tests talk to them only over HTTP, the ops CLI and the broker. A service
 * may run as several replicas (numbered from 1, each on ports of its own); a method given only a
 * service acts on every replica of it, and its URLs are replica 1's.
 */
export class TestSystem {
  /** Each service's replicas, replica n at index n - 1 (undefined until it was first started). */
  private readonly services = new Map<ServiceName, (ServiceProcess | undefined)[]>();
  private supervisor: ReplicaSupervisor | undefined;
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
    const replicaPorts = await replicaPortsFor(options.replicas ?? {});
    const database = await createTestDatabase();
    const prefix = `${uniqueName('t')}.`;
    const env = testEnvironment(database, prefix, replicaPorts, extraEnv);
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

  private running(service: ServiceName, replica: number): ServiceProcess | undefined {
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
    this.supervisor?.starting(label);
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
    const running: ServiceProcess = { process: child, port, output: [], stoppedOnPurpose: false };
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
    this.supervisor ??= new ReplicaSupervisor(
      (name, replica) => this.startReplica(name, replica),
      (name, replica) => this.running(name, replica),
    );
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
    return Object.fromEntries(SERVICES.map((s) => [s, this.supervisor?.counts(s) ?? { exits: 0, restarts: 0 }])) as Record<
      ServiceName,
      { exits: number; restarts: number }
    >;
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

  private exited(name: ServiceName, replica: number, running: ServiceProcess): void {
    if (this.stopping || running.stoppedOnPurpose || this.running(name, replica) !== running) return;
    this.supervisor?.exited({ name, replica, label: this.label(name, replica) }, running);
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
    return this.supervisor?.exitedLogs(name) ?? '';
  }

  /** Reads this system's database directly: for asserting what the API cannot show. */
  sql<T extends Record<string, unknown> = Record<string, any>>(text: string, values: unknown[] = []): Promise<T[]> {
    return queryOnce<T>(this.database.url, text, values);
  }

  /** One connection to this system's database, kept open for many reads (a fuzzer reads after every case). */
  sqlSession(): Promise<SqlSession> {
    return openSqlSession(this.database.url);
  }

  /** A queue of this system's broker (name without the prefix): messages ready in it, and its consumers. */
  queueState(queue: string): Promise<{ ready: number; consumers: number }> {
    return queueStateOf(`${this.env.AMQP_PREFIX}${queue}`);
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
    this.supervisor?.stop();
    await this.opsSession?.close();
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
