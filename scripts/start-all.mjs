// Runs the four services on this machine as one foreground process (`npm start`): each line they
// print is prefixed with the service's name, a service that exits on its own is restarted with
// backoff, and SIGINT/SIGTERM stop them all gracefully. Ports and URLs come from the environment
// (docs/CONFIGURATION.md); each service's database user is its own role, and its broker user its own.
// REPLICAS_<SERVICE> runs that many processes of a service, each supervised on its own and named
// `<service>#<n>`; replica n listens on its ports + 10 × (n - 1) (docs/decisions/0091-local-replica-ports.md).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVICES = ['orders-api', 'bank-ingest', 'matcher', 'webhook-dispatcher'];
/** Each service's public and admin port variables, with the services' own defaults (services/<service>/src/config.ts). */
const PORTS = {
  'orders-api': { public: ['ORDERS_API_PORT', 3000], admin: ['ORDERS_API_ADMIN_PORT', 9100] },
  'bank-ingest': { public: ['BANK_INGEST_PORT', 3001], admin: ['BANK_INGEST_ADMIN_PORT', 9101] },
  matcher: { public: ['MATCHER_PORT', 3002], admin: ['MATCHER_ADMIN_PORT', 9102] },
  'webhook-dispatcher': { public: ['WEBHOOK_DISPATCHER_PORT', 3003], admin: ['WEBHOOK_DISPATCHER_ADMIN_PORT', 9103] },
};
/** Replica n of a service listens on its ports + REPLICA_PORT_STEP × (n - 1). */
const REPLICA_PORT_STEP = 10;
const MAX_REPLICAS = 10;
const variableOf = (name) => name.toUpperCase().replace(/-/g, '_');

/** The processes to run: one per replica of each service, with its own ports; exits naming every bad setting. */
function plan() {
  const problems = [];
  const processes = [];
  for (const name of SERVICES) {
    const variable = `REPLICAS_${variableOf(name)}`;
    const raw = process.env[variable];
    const replicas = raw === undefined || raw === '' ? 1 : /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (!(replicas >= 1 && replicas <= MAX_REPLICAS)) {
      problems.push(`${variable}=${JSON.stringify(raw)}: the number of ${name} processes must be a whole number from 1 to ${MAX_REPLICAS}`);
      continue;
    }
    const ports = {};
    for (const [key, fallback] of Object.values(PORTS[name])) {
      const given = process.env[key];
      const base = given === undefined || given === '' ? fallback : Number(given);
      // A single process gets the variable as it is, and the service judges it.
      if (replicas > 1 && !(Number.isInteger(base) && base >= 0 && base <= 65535)) problems.push(`${key}=${JSON.stringify(given)}: not a port`);
      ports[key] = base;
    }
    for (let replica = 1; replica <= replicas; replica += 1) {
      // Port 0 (the system picks one) stays 0 for every replica.
      const own = Object.entries(ports).map(([key, base]) => [key, base === 0 ? 0 : base + REPLICA_PORT_STEP * (replica - 1)]);
      processes.push({ name, replica, label: replicas === 1 ? name : `${name}#${replica}`, ports: Object.fromEntries(own) });
    }
  }
  const owners = new Map();
  for (const p of processes) {
    for (const [key, port] of Object.entries(p.ports)) {
      if (port === 0 || !Number.isInteger(port)) continue;
      if (port > 65535) problems.push(`${p.label}: its ${key} would be ${port}, past 65535`);
      else if (owners.has(port)) problems.push(`${p.label}'s ${key} and ${owners.get(port)} would both be ${port}`);
      else owners.set(port, `${p.label}'s ${key}`);
    }
  }
  return { problems, processes };
}

const { problems, processes } = plan();
const NAME_WIDTH = Math.max('start-all'.length, ...processes.map((p) => p.label.length), ...SERVICES.map((s) => s.length));

const BACKOFF_START_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;
/** A service that ran this long before exiting is treated as healthy: its backoff starts over. */
const STABLE_AFTER_MS = 60_000;
/** Past this many crashes in a row, only every tenth is reported, so a crash loop cannot flood the log. */
const QUIET_AFTER_CRASHES = 5;
/** How long the services get to finish in-flight work after SIGTERM before they are killed. */
const STOP_GRACE_MS = 20_000;

const say = (line) => process.stdout.write(`${'start-all'.padEnd(NAME_WIDTH)} | ${line}\n`);

if (problems.length > 0) {
  for (const problem of problems) say(problem);
  say(`replica n of a service listens on its ports + ${REPLICA_PORT_STEP} × (n - 1) (docs/CONFIGURATION.md)`);
  process.exit(2);
}

const missing = SERVICES.filter((name) => !existsSync(entryOf(name)));
if (missing.length > 0) {
  say(`not built: ${missing.map(entryOf).join(', ')}; run \`npm run build\` (or \`npm start\`, which builds)`);
  process.exit(1);
}

function entryOf(name) {
  return join(root, 'services', name, 'dist', 'main.js');
}

const DEFAULT_RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:5672';
const require = createRequire(import.meta.url);
const platform = require('../packages/platform/dist/index.js');
/** Whether this machine's broker has the per-service users (scripts/broker-users.mjs): one login of one of them. */
const localBrokerUsers = await (async () => {
  const brokerUrl = process.env.RABBITMQ_URL || DEFAULT_RABBITMQ_URL;
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(brokerUrl).hostname)) return false;
  const amqp = require('../packages/platform/node_modules/amqplib');
  const user = platform.BROKER_USERS.topology;
  try {
    const url = platform.brokerUrlAs(brokerUrl, user, platform.localBrokerPassword(user));
    await (await amqp.connect(url)).close();
    return true;
  } catch {
    return false;
  }
})();
if (localBrokerUsers) say('each service connects to RabbitMQ as its own user (scripts/broker-users.mjs)');

let stopping = false;
const supervised = processes.map((p) => ({ ...p, child: undefined, timer: undefined, crashes: 0, backoffMs: BACKOFF_START_MS }));
const several = supervised.filter((s) => s.label !== s.name);
if (several.length > 0) {
  for (const s of several)
    say(
      `${s.label}: ${Object.entries(s.ports)
        .map(([key, port]) => `${key}=${port}`)
        .join(', ')}`,
    );
}

function pipeLines(stream, out, name) {
  const prefix = `${name.padEnd(NAME_WIDTH)} | `;
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => out.write(prefix + line + '\n'));
}

const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/matching';

/**
 * Each service connects as its own database role (least privilege; see the service_roles
 * migration): <SERVICE>_DATABASE_URL when given, else DATABASE_URL with the role as its user.
 */
function databaseUrlOf(name) {
  const own = process.env[`${variableOf(name)}_DATABASE_URL`];
  if (own) return own;
  const url = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  url.username = `pmatch_${name.replace(/-/g, '_')}`;
  url.password = '';
  return url.toString();
}

/**
 * Each service connects to RabbitMQ as its own user (docs/decisions/0087-one-broker-user-per-service.md):
 * <SERVICE>_RABBITMQ_URL when given, else, when this machine's broker has the users setup.sh
 * creates, RABBITMQ_URL with the user's own name and local password, else RABBITMQ_URL as it is.
 */
function rabbitmqUrlOf(name) {
  const own = process.env[`${variableOf(name)}_RABBITMQ_URL`];
  if (own) return own;
  const url = process.env.RABBITMQ_URL || DEFAULT_RABBITMQ_URL;
  if (!localBrokerUsers) return url;
  const user = platform.BROKER_USERS[name];
  return platform.brokerUrlAs(url, user, platform.localBrokerPassword(user));
}

function launch(service) {
  service.timer = undefined;
  const startedAt = Date.now();
  // Own process group: a Ctrl-C in the terminal reaches only us, and each service then gets
  // exactly one SIGTERM (a second signal would make it exit without finishing its work).
  const child = spawn(process.execPath, [entryOf(service.name)], {
    cwd: root,
    env: {
      ...process.env,
      // The first replica reads its ports from the environment as it is; the others get theirs.
      ...(service.replica > 1 ? Object.fromEntries(Object.entries(service.ports).map(([key, port]) => [key, String(port)])) : {}),
      DATABASE_URL: databaseUrlOf(service.name),
      RABBITMQ_URL: rabbitmqUrlOf(service.name),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  service.child = child;
  pipeLines(child.stdout, process.stdout, service.label);
  pipeLines(child.stderr, process.stderr, service.label);
  child.on('error', (error) => say(`${service.label}: could not start: ${error.message}`));
  child.on('exit', (code, signal) => {
    service.child = undefined;
    if (stopping) return;
    if (Date.now() - startedAt >= STABLE_AFTER_MS) {
      service.crashes = 0;
      service.backoffMs = BACKOFF_START_MS;
    }
    service.crashes += 1;
    const delay = service.backoffMs;
    service.backoffMs = Math.min(service.backoffMs * 2, BACKOFF_MAX_MS);
    if (service.crashes <= QUIET_AFTER_CRASHES || service.crashes % 10 === 0) {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      say(`${service.label} exited (${how}); restarting in ${delay / 1000}s (crash ${service.crashes} in a row)`);
    }
    service.timer = setTimeout(() => launch(service), delay);
  });
}

function signalChild(service, signal) {
  if (!service.child || service.child.exitCode !== null || service.child.signalCode !== null) return;
  try {
    service.child.kill(signal);
  } catch {
    // Already gone between the check and the kill.
  }
}

async function stopAll(signal) {
  if (stopping) {
    say(`${signal} again: killing the services now`);
    for (const service of supervised) signalChild(service, 'SIGKILL');
    process.exit(1);
  }
  stopping = true;
  say(`${signal}: stopping the services`);
  const exited = supervised.map((service) => {
    clearTimeout(service.timer);
    const child = service.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => child.once('exit', resolve));
  });
  for (const service of supervised) signalChild(service, 'SIGTERM');
  const killer = setTimeout(() => {
    say(`services still running after ${STOP_GRACE_MS / 1000}s; killing them`);
    for (const service of supervised) signalChild(service, 'SIGKILL');
  }, STOP_GRACE_MS);
  await Promise.all(exited);
  clearTimeout(killer);
  say('all services stopped');
  process.exit(0);
}

process.on('SIGINT', () => void stopAll('SIGINT'));
process.on('SIGTERM', () => void stopAll('SIGTERM'));
// If we die some other way, take no orphans along into the background.
process.on('exit', () => {
  for (const service of supervised) signalChild(service, 'SIGKILL');
});

for (const service of supervised) launch(service);

const apiPort = process.env.ORDERS_API_PORT || '3000';
// orders-api's admin port (/readyz); its default is in services/orders-api/src/config.ts.
const apiAdminPort = process.env.ORDERS_API_ADMIN_PORT || '9100';
const apiUrl = (process.env.PUBLIC_BASE_URL || `http://localhost:${apiPort}`).replace(/\/+$/, '');
void announceWhenReady();

async function announceWhenReady() {
  const deadline = Date.now() + 60_000;
  let ready = false;
  while (!stopping && !ready && Date.now() < deadline) {
    ready = await fetch(`http://127.0.0.1:${apiAdminPort}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  if (stopping) return;
  say(ready ? `orders-api is ready at ${apiUrl}` : `orders-api is not ready yet; it will be at ${apiUrl}`);
  say('create an organisation and a test-mode API key with:');
  say('  npm run -s ops -- org create --name "Acme" --owner-email owner@example.com');
  say('  npm run -s ops -- key issue --org org_... --mode test --name dev');
  say('  (or `pnpm --silent ops …` where pnpm is installed; `npm run -s ops -- --help` lists every command)');
  if (!process.env.SMTP_URL) say(`owner e-mails are written to ${process.env.MAIL_DIR ?? '.tmp/mail'} as .eml files (SMTP_URL is not set)`);
  say('Ctrl-C stops everything');
}
