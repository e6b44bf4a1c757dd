import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Client } from 'pg';
import { adminUrl, databaseUrl, rabbitmqUrl, redisUrl, templateDatabase } from './names';

/**
 * Broker and Redis addresses for tests: the environment first, the local defaults otherwise (or
 * the containers jest's global setup started in their place, which set the TEST_ variables).
 */
export const RABBITMQ_URL = rabbitmqUrl();
export const REDIS_URL = redisUrl();

export function uniqueName(prefix: string): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of this test file's own, cloned from the global template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = uniqueName('pmatch_t_');
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${templateDatabase()}"`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(name),
    drop: async () => {
      const client = new Client({ connectionString: adminUrl() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A port nothing listens on, for a server a test starts later. It is picked below the kernel's
 * ephemeral range where the range allows: a port the kernel hands out for `listen(0)` comes from
 * the range it also gives outbound connections, and one of the many a test run opens can take it
 * before the server binds (EADDRINUSE at start-up). No port is handed out twice in a process, and
 * each jest worker picks from ports of its own (`portStripe`), so two workers never pick the same.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralPortRange();
  if (low - FIXED_PORTS_FROM < 1_000 * PORT_STRIPES) return kernelChosenPort();
  const stripe = portStripe();
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = FIXED_PORTS_FROM + randomInt(Math.floor((low - FIXED_PORTS_FROM) / PORT_STRIPES)) * PORT_STRIPES + stripe;
    if (!handedOutPorts.has(port) && (await canListenOn(port))) {
      handedOutPorts.add(port);
      return port;
    }
  }
  return kernelChosenPort();
}

/** Where ports picked for test servers start; below are well-known and registered services. */
const FIXED_PORTS_FROM = 20_000;
const handedOutPorts = new Set<number>();
/** Workers' port sets: a port p belongs to worker w when p mod PORT_STRIPES = portStripe() of w. */
const PORT_STRIPES = 8;

/** This process's residue of ports: from jest's JEST_WORKER_ID (1, 2, …), 0 outside a worker. */
export function portStripe(): number {
  const worker = Number(process.env.JEST_WORKER_ID);
  return Number.isInteger(worker) && worker > 0 ? (worker - 1) % PORT_STRIPES : 0;
}

/** The kernel's range for ephemeral ports, [low, high]; Linux's default where it cannot be read. */
export function ephemeralPortRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // not Linux: the default below
  }
  return [32_768, 60_999];
}

async function canListenOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

async function kernelChosenPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Waits until `probe` returns a value other than undefined. This waits on an outcome (a row, a
 * status), checked repeatedly, with a deadline: never a fixed sleep standing in for one.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, options: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
