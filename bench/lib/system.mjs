import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { randomBytes, randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Redis } from 'ioredis';
import { sleep, waitUntil } from './stats.mjs';

const require = createRequire(import.meta.url);

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SERVICES = ['orders-api', 'bank-ingest', 'matcher', 'webhook-dispatcher'];
const PORT_VARIABLE = {
  'orders-api': 'ORDERS_API_PORT',
  'bank-ingest': 'BANK_INGEST_PORT',
  matcher: 'MATCHER_PORT',
  'webhook-dispatcher': 'WEBHOOK_DISPATCHER_PORT',
};
/** Each service's admin port (/healthz, /readyz, /metrics). */
const ADMIN_PORT_VARIABLE = {
  'orders-api': 'ORDERS_API_ADMIN_PORT',
  'bank-ingest': 'BANK_INGEST_ADMIN_PORT',
  matcher: 'MATCHER_ADMIN_PORT',
  'webhook-dispatcher': 'WEBHOOK_DISPATCHER_ADMIN_PORT',
};

/** Built code the bench runs; it builds nothing itself. */
const REQUIRED_DIST = [
  ...SERVICES.map((s) => join('services', s, 'dist', 'main.js')),
  join('packages', 'ops', 'dist', 'main.js'),
  join('packages', 'db', 'dist', 'migrate.js'),
  join('packages', 'platform', 'dist', 'index.js'),
  join('packages', 'contracts', 'dist', 'index.js'),
];

export function assertBuilt() {
  const missing = REQUIRED_DIST.filter((p) => !existsSync(join(REPO_ROOT, p)));
  if (missing.length > 0) {
    throw new Error(`built code is missing (${missing.join(', ')}): run \`npm run build\` first; the bench builds nothing itself`);
  }
}

export const INFRA = {
  adminDatabaseUrl: process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres',
  rabbitmqUrl: process.env.TEST_RABBITMQ_URL ?? process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  redisUrl: process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
};

export function databaseUrl(name) {
  const url = new URL(INFRA.adminDatabaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export function uniqueName(prefix) {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** Runs `fn` with a client of its own on `url`, closed afterwards. */
export async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh database with the project's migrations applied (the same runner the services use). */
export async function createMigratedDatabase(prefix) {
  const name = uniqueName(prefix);
  await withClient(databaseUrl('postgres'), (c) => c.query(`CREATE DATABASE "${name}"`));
  const { migrate } = require(join(REPO_ROOT, 'packages', 'db', 'dist', 'migrate.js'));
  await migrate(databaseUrl(name));
  return {
    name,
    url: databaseUrl(name),
    drop: () => withClient(databaseUrl('postgres'), (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
  };
}

/**
 * A port nothing listens on, below the kernel's ephemeral range: a port from listen(0) comes from
 * the range the run's own outbound connections use, and one of them can take it before the service
 * binds it (the test kit's freePort says more).
 */
async function freePort() {
  const low = ephemeralPortsFrom();
  for (let attempt = 0; attempt < 100 && low - BENCH_PORTS_FROM >= 1_000; attempt += 1) {
    const port = BENCH_PORTS_FROM + randomInt(low - BENCH_PORTS_FROM);
    if (!handedOutPorts.has(port) && (await listenAndClose(port)) === port) {
      handedOutPorts.add(port);
      return port;
    }
  }
  const port = await listenAndClose(0);
  if (port === undefined) throw new Error('bench: the kernel gave no free port');
  return port;
}

const BENCH_PORTS_FROM = 20_000;
const handedOutPorts = new Set();

/** Where the kernel's ephemeral ports start (Linux's default where the setting cannot be read). */
function ephemeralPortsFrom() {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Listens on `port` (0: one the kernel picks) and closes; the port bound, or undefined if taken. */
function listenAndClose(port) {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once('error', () => resolvePort(undefined));
    server.listen(port, '0.0.0.0', () => {
      const bound = server.address().port;
      server.close(() => resolvePort(bound));
    });
  });
}

/**
 * The four services as real processes from their built dist, on a database, an AMQP name prefix
 * and a Redis key prefix of the bench's own (what the testkit's TestSystem does for tests, in
 * plain JS so the bench needs no TypeScript toolchain at run time). With `external`, it starts
 * nothing and only points at services already running.
 */
export class BenchSystem {
  constructor(database, env, external) {
    this.database = database;
    this.env = env;
    this.external = external;
    this.services = new Map();
  }

  static async start({ extraEnv = {}, serviceEnv = {}, profileDir, external, keepDatabase = false } = {}) {
    if (external) {
      const env = { DATABASE_URL: external.databaseUrl, RABBITMQ_URL: INFRA.rabbitmqUrl, REDIS_URL: INFRA.redisUrl };
      return new BenchSystem({ name: new URL(external.databaseUrl).pathname.slice(1), url: external.databaseUrl, drop: async () => undefined }, env, external);
    }
    const database = await createMigratedDatabase('pmatch_bench_');
    if (keepDatabase) database.drop = async () => undefined;
    const prefix = `${uniqueName('bench')}.`;
    const ports = {};
    for (const s of SERVICES) ports[PORT_VARIABLE[s]] = String(await freePort());
    for (const s of SERVICES) ports[ADMIN_PORT_VARIABLE[s]] = String(await freePort());
    const env = {
      // `test` as in the testkit: production refuses the test CA and loopback exemptions the
      // webhook receiver needs. Nothing else in the services depends on it.
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      DATABASE_URL: database.url,
      RABBITMQ_URL: INFRA.rabbitmqUrl,
      AMQP_PREFIX: prefix,
      REDIS_URL: INFRA.redisUrl,
      REDIS_PREFIX: `pmatch-bench:${prefix}`,
      PUBLIC_BASE_URL: `http://127.0.0.1:${ports.ORDERS_API_PORT}`,
      SECRETS_KEY: 'bench-secrets-key-0123456789',
      ...ports,
      ...extraEnv,
    };
    const system = new BenchSystem(database, env, undefined);
    // Per-service overrides, possibly computed from the database (e.g. a proxy in front of it).
    system.serviceEnv = typeof serviceEnv === 'function' ? serviceEnv(database) : serviceEnv;
    try {
      await Promise.all(SERVICES.map((s) => system.startService(s, profileDir)));
    } catch (error) {
      await system.stop();
      throw error;
    }
    return system;
  }

  url(service) {
    if (this.external) {
      if (service === 'orders-api') return this.external.apiUrl;
      if (service === 'bank-ingest') return this.external.ingestUrl;
      throw new Error(`${service} is not known for external services`);
    }
    return `http://127.0.0.1:${this.env[PORT_VARIABLE[service]]}`;
  }

  get apiUrl() {
    return this.url('orders-api');
  }

  get ingestUrl() {
    return this.url('bank-ingest');
  }

  pids() {
    return Object.fromEntries([...this.services].map(([name, s]) => [name, s.process.pid]));
  }

  /** The names of the processes started: each service's, and `matcher#2` for a second matcher. */
  processNames() {
    return [...this.services.keys()];
  }

  replicaStarted(name) {
    return this.services.has(`${name}#2`);
  }

  /** Starts a second process of the service (`<name>#2`) on ports of its own, beside the first. */
  async startReplica(name) {
    const ports = { [PORT_VARIABLE[name]]: String(await freePort()), [ADMIN_PORT_VARIABLE[name]]: String(await freePort()) };
    await this.startService(name, this.profileDir, { replica: 2, ports });
  }

  async startService(name, profileDir, { replica = 1, ports = {} } = {}) {
    this.profileDir = profileDir;
    const processName = replica === 1 ? name : `${name}#${replica}`;
    const env = { ...process.env, ...this.env, ...(this.serviceEnv?.[name] ?? {}), ...ports };
    // Node 20 refuses --cpu-prof in NODE_OPTIONS, so it goes on the command line.
    const nodeArgs = [];
    if (profileDir) {
      mkdirSync(join(profileDir, processName), { recursive: true });
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${join(profileDir, processName)}`);
    }
    const child = spawn(process.execPath, [...nodeArgs, join(REPO_ROOT, 'services', name, 'dist', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const running = { process: child, output: [] };
    const keep = (chunk) => {
      running.output.push(chunk.toString('utf8'));
      if (running.output.length > 200) running.output.shift();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    this.services.set(processName, running);
    const url = `http://127.0.0.1:${env[ADMIN_PORT_VARIABLE[name]]}/readyz`;
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`${processName} exited with ${child.exitCode}:\n${running.output.join('')}`);
        const res = await fetch(url).catch(() => undefined);
        return res?.status === 200 ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: `${processName} to be ready` },
    );
  }

  /** Services that died during the run, with their last output, so a crash is never mistaken for slowness. */
  crashed() {
    return [...this.services]
      .filter(([, s]) => s.process.exitCode !== null || s.process.signalCode !== null)
      .map(([name, s]) => ({ name, exitCode: s.process.exitCode, output: s.output.join('').slice(-4000) }));
  }

  logs(name) {
    return this.services.get(name)?.output.join('') ?? '';
  }

  async sql(text, values = []) {
    const client = new pg.Client({ connectionString: this.database.url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /**
   * The operator's commands (packages/ops) run in this process on one Prisma client: the same code
   * as the CLI without a process start per command, which on a loaded 2-core machine costs seconds.
   */
  async operator() {
    if (!this.operatorClient) {
      const ops = require(join(REPO_ROOT, 'packages', 'ops', 'dist', 'index.js'));
      const { createPrisma } = require(join(REPO_ROOT, 'packages', 'db', 'dist', 'index.js'));
      const { SecretBox } = require(join(REPO_ROOT, 'packages', 'platform', 'dist', 'index.js'));
      const prisma = createPrisma(this.database.url, { poolSize: 4 });
      const secretBox = new SecretBox(this.env.SECRETS_KEY ?? process.env.SECRETS_KEY ?? 'dev-only-secrets-key-change-me');
      this.operatorClient = {
        prisma,
        createOrganisation: (name, ownerEmail) => ops.createOrganisation(prisma, { name, ownerEmail }),
        issueApiKey: (organisationId, mode, name) => ops.issueApiKey(prisma, { organisationId, mode, name, permission: 'read_write' }),
        addLiveBankAccount: (input) => ops.addLiveBankAccount(prisma, input),
        createBankAdapter: (name, bankAccountIds) => ops.createBankAdapter(prisma, { name, bankAccountIds }, secretBox),
      };
    }
    return this.operatorClient;
  }

  async stop() {
    await this.operatorClient?.prisma.$disconnect().catch(() => undefined);
    await Promise.all(
      [...this.services.values()].map(async (s) => {
        if (s.process.exitCode !== null || s.process.signalCode !== null) return;
        const exited = new Promise((r) => s.process.once('exit', r));
        s.process.kill('SIGTERM');
        // Bounded: a service that does not stop in 30 s is killed (its CPU profile is then lost).
        const timer = setTimeout(() => s.process.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    if (this.external) return;
    await cleanUpBroker(this.env.AMQP_PREFIX).catch((e) => console.error(`bench: could not delete AMQP topology: ${e.message}`));
    await cleanUpRedis(this.env.REDIS_PREFIX).catch((e) => console.error(`bench: could not delete Redis keys: ${e.message}`));
    await this.database.drop();
  }
}

async function cleanUpBroker(prefix) {
  const { Broker, createLogger } = require(join(REPO_ROOT, 'packages', 'platform', 'dist', 'index.js'));
  const broker = await Broker.connect(INFRA.rabbitmqUrl, prefix, createLogger('bench-cleanup', 'silent'));
  try {
    await broker.deleteTopology();
  } finally {
    await broker.close();
  }
}

export async function cleanUpRedis(prefix) {
  const redis = new Redis(INFRA.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let cursor = '0';
    // Bounded: at most 10,000 SCAN pages.
    for (let page = 0; page < 10_000; page++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    redis.disconnect();
  }
}

/** Gives an async step a deadline; the step is abandoned (not cancelled) when it passes. */
export async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export { sleep };
