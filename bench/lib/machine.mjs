import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import amqp from 'amqplib';
import pg from 'pg';
import { Redis } from 'ioredis';
import { round } from './stats.mjs';

/** The machine and the versions underneath, so a figure always says where it was measured. */
export async function describeMachine(infra) {
  const cpuinfo = safeRead('/proc/cpuinfo');
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  return {
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpuModel: model,
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres: await pgVersion(infra.adminDatabaseUrl).catch((e) => `unknown (${e.message})`),
    rabbitmq: await rabbitVersion(infra.rabbitmqUrl).catch((e) => `unknown (${e.message})`),
    redis: await redisVersion(infra.redisUrl).catch((e) => `unknown (${e.message})`),
    loadAverageAtStart: os.loadavg().map((l) => round(l, 2)),
  };
}

function safeRead(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

async function pgVersion(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('SHOW server_version');
    const settings = await client.query(
      "SELECT name, setting FROM pg_settings WHERE name IN ('shared_buffers','synchronous_commit','max_connections','fsync','autovacuum','autovacuum_naptime','shared_preload_libraries') AND setting <> ''",
    );
    return `${rows[0].server_version} (${settings.rows.map((r) => `${r.name}=${r.setting}`).join(', ')})`;
  } finally {
    await client.end();
  }
}

async function rabbitVersion(url) {
  const connection = await amqp.connect(url);
  try {
    const props = connection.connection.serverProperties ?? {};
    return String(props.version ?? 'unknown');
  } finally {
    await connection.close();
  }
}

async function redisVersion(url) {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const info = await redis.info('server');
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } finally {
    redis.disconnect();
  }
}

/** The most resident memory the process has had (`VmHWM`), in MiB; undefined once it has exited. */
export function peakRssMiB(pid) {
  const match = /VmHWM:\s+([0-9]+) kB/.exec(safeRead(`/proc/${pid}/status`));
  return match ? Math.round(Number(match[1]) / 1024) : undefined;
}

/**
 * A CpuMeter source: the backends of these databases (autovacuum workers included) and the
 * server's own background processes, each with the kind it is counted under.
 */
export function postgresPidsOf(adminUrl, databaseNames) {
  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT pid, CASE backend_type WHEN 'client backend' THEN 'backends' WHEN 'autovacuum worker' THEN 'autovacuum' ELSE 'background' END AS kind
         FROM pg_stat_activity WHERE datname = ANY($1::text[]) OR datname IS NULL`,
        [databaseNames],
      );
      return rows.map((r) => ({ pid: String(r.pid), kind: r.kind }));
    } finally {
      await client.end();
    }
  };
}

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from /proc; undefined if it is gone. */
function processCpuSeconds(pid) {
  const stat = safeRead(`/proc/${pid}/stat`);
  if (stat === '') return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Pids of every process whose command name starts with one of `names`, by name. */
function pidsByCommand(names) {
  const found = Object.fromEntries(names.map((n) => [n, []]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = safeRead(`/proc/${entry}/comm`).trim();
    const key = names.find((n) => comm.startsWith(n));
    if (key !== undefined) found[key].push(entry);
  }
  return found;
}

function machineCpuSeconds() {
  const line = safeRead('/proc/stat').split('\n')[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  const busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  const total = busy + v[3] + v[4];
  return { busy: busy / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

/**
 * Where the CPU went during a phase: each service process, the bench process itself, PostgreSQL
 * (the backends connected to the bench's own databases, its autovacuum workers included, plus the
 * server's background processes, not other users' backends), RabbitMQ and Redis, and how busy the
 * whole machine was. CPU is summed per pid, so processes that come and go never make a figure
 * negative. PostgreSQL's processes are also read every `sampleEveryMs`, and the last reading of
 * one that has exited still counts: an autovacuum worker that runs for a few seconds within a
 * phase is counted (up to its last reading) rather than left to "other". Other processes that
 * exit during a phase lose their share (an undercount).
 */
export class CpuMeter {
  /** `postgresPids` resolves with the PostgreSQL processes to count, as `{ pid, kind }`. */
  constructor(pids, postgresPids = async () => [], { sampleEveryMs = 1000 } = {}) {
    this.pids = pids;
    this.postgresPids = postgresPids;
    /** The last CPU seconds read of every PostgreSQL pid seen so far, exited ones included. */
    this.postgresSeen = new Map();
    /** The kind of every PostgreSQL pid seen so far: backends, autovacuum or background. */
    this.postgresKind = new Map();
    this.sampler = setInterval(() => void this.samplePostgres(), sampleEveryMs);
    this.sampler.unref();
  }

  async samplePostgres() {
    for (const { pid, kind } of await this.postgresPids().catch(() => [])) {
      const cpu = processCpuSeconds(pid);
      if (cpu === undefined) continue;
      this.postgresSeen.set(pid, cpu);
      this.postgresKind.set(pid, kind);
    }
  }

  stop() {
    clearInterval(this.sampler);
  }

  async snapshot() {
    const perPid = (pids) => Object.fromEntries(pids.map((pid) => [pid, processCpuSeconds(pid) ?? 0]));
    const byCommand = pidsByCommand(['beam.smp', 'redis-server']);
    const usage = process.cpuUsage();
    await this.samplePostgres();
    return {
      at: Date.now(),
      services: Object.fromEntries(Object.entries(this.pids).map(([name, pid]) => [name, perPid([pid])])),
      bench: (usage.user + usage.system) / 1e6,
      infra: {
        postgres: Object.fromEntries(this.postgresSeen),
        'beam.smp': perPid(byCommand['beam.smp']),
        'redis-server': perPid(byCommand['redis-server']),
      },
      postgresByKind: this.postgresByKind(),
      machine: machineCpuSeconds(),
    };
  }

  /** The PostgreSQL readings so far, grouped by kind of process. */
  postgresByKind() {
    const groups = { backends: {}, autovacuum: {}, background: {} };
    for (const [pid, cpu] of this.postgresSeen) groups[this.postgresKind.get(pid)][pid] = cpu;
    return groups;
  }

  /**
   * A `diff` as milliseconds of CPU per item (a deposit, a request), by process, with `all`: the
   * sum of every process counted (services, infrastructure, the bench).
   */
  static perItem(used, items) {
    const per = (seconds) => round((1000 * seconds) / items, 2);
    const perEach = (group) => Object.fromEntries(Object.entries(group).map(([name, seconds]) => [name, per(seconds)]));
    const sum = (group) => Object.values(group).reduce((a, b) => a + b, 0);
    return {
      services: perEach(used.services),
      infra: perEach(used.infra),
      postgresByKind: perEach(used.postgresByKind),
      bench: per(used.bench),
      all: per(sum(used.services) + sum(used.infra) + used.bench),
      machineBusyPercent: used.machineBusyPercent,
      otherPercent: used.otherPercent,
    };
  }

  static diff(a, b) {
    const wall = (b.at - a.at) / 1000;
    const used = (x, y) => Object.entries(y).reduce((sum, [pid, v]) => sum + Math.max(0, v - (x?.[pid] ?? 0)), 0);
    const group = (x, y) => Object.fromEntries(Object.keys(y).map((k) => [k, round(used(x[k], y[k]), 2)]));
    const services = group(a.services, b.services);
    const infra = group(a.infra, b.infra);
    const machineBusy = b.machine.busy - a.machine.busy;
    const machineTotal = b.machine.total - a.machine.total;
    const ours = [...Object.values(services), ...Object.values(infra), b.bench - a.bench].reduce((x, y) => x + y, 0);
    return {
      wallSeconds: round(wall, 2),
      services,
      bench: round(b.bench - a.bench, 2),
      infra,
      postgresByKind: group(a.postgresByKind, b.postgresByKind),
      machineBusyPercent: machineTotal > 0 ? round((100 * machineBusy) / machineTotal, 1) : undefined,
      // CPU the machine spent on anything else: other users' work on a shared machine, the kernel.
      otherPercent: machineTotal > 0 ? round((100 * Math.max(0, machineBusy - ours)) / machineTotal, 1) : undefined,
    };
  }
}
