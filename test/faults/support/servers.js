// A RabbitMQ node and a Redis server of the fault suite's own, started from the machine's installed
// servers on free ports. The suite stops and restarts them on purpose; with servers of its own it
// never touches the machine's shared ones, so it can run beside any other test run (and in CI).
// Plain JavaScript because jest's global setup and teardown load it as well as the suite.
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { mkdirSync, rmSync, writeFileSync, chmodSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');

/** Environment variables through which global setup hands the servers to the suite and to teardown. */
const VARIABLES = {
  dir: 'FAULT_SERVERS_DIR',
  rabbitNode: 'FAULT_RABBITMQ_NODE',
  rabbitPort: 'FAULT_RABBITMQ_PORT',
  rabbitDistPort: 'FAULT_RABBITMQ_DIST_PORT',
  redisPort: 'FAULT_REDIS_PORT',
};

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const execFileAsync = promisify(execFile);

/** Runs a command without blocking the event loop (the suite's load goes on meanwhile); resolves with its stdout. */
async function run(command, args, { env = {}, timeoutMs = 60_000 } = {}) {
  const { stdout } = await execFileAsync(command, args, { env: { ...process.env, ...env }, timeout: timeoutMs, encoding: 'utf8' });
  return stdout;
}

async function requireCommand(command) {
  try {
    await run('sh', ['-c', `command -v ${command}`]);
  } catch {
    throw new Error(`the fault suite starts its own servers and needs ${command} installed on this machine`);
  }
}

/** The servers described by the environment global setup wrote. */
function fromEnvironment(env = process.env) {
  const missing = Object.values(VARIABLES).filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`fault suite servers not started (missing ${missing.join(', ')}): run it with jest.faults.config.js`);
  return {
    dir: env[VARIABLES.dir],
    rabbitNode: env[VARIABLES.rabbitNode],
    rabbitPort: Number(env[VARIABLES.rabbitPort]),
    rabbitDistPort: Number(env[VARIABLES.rabbitDistPort]),
    redisPort: Number(env[VARIABLES.redisPort]),
  };
}

function rabbitUrl(servers) {
  return `amqp://guest:guest@127.0.0.1:${servers.rabbitPort}`;
}

function redisUrl(servers) {
  return `redis://127.0.0.1:${servers.redisPort}`;
}

function rabbitEnvironment(servers) {
  const base = join(servers.dir, 'rabbitmq');
  return {
    RABBITMQ_NODENAME: servers.rabbitNode,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(servers.rabbitPort),
    RABBITMQ_DIST_PORT: String(servers.rabbitDistPort),
    RABBITMQ_MNESIA_BASE: join(base, 'mnesia'),
    RABBITMQ_LOG_BASE: join(base, 'log'),
    RABBITMQ_PID_FILE: join(base, 'pid'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(base, 'enabled_plugins'),
    // No file here: the machine's rabbitmq.conf names the shared node's listener.
    RABBITMQ_CONFIG_FILE: join(base, 'rabbitmq'),
  };
}

/** `rabbitmqctl` against the suite's own node. */
async function rabbitmqctl(servers, args, timeoutMs = 120_000) {
  return run('rabbitmqctl', ['-n', servers.rabbitNode, '-q', ...args], { env: rabbitEnvironment(servers), timeoutMs });
}

async function startRedis(servers) {
  const dir = join(servers.dir, 'redis');
  mkdirSync(dir, { recursive: true });
  await run('redis-server', [
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '--port',
    String(servers.redisPort),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--logfile',
    join(dir, 'redis.log'),
    '--pidfile',
    join(dir, 'redis.pid'),
  ]);
}

/** SHUTDOWN NOSAVE: every key (locks, rate-limit buckets) is gone. The server closes the connection as it goes. */
async function stopRedis(servers) {
  try {
    await run('redis-cli', ['-h', '127.0.0.1', '-p', String(servers.redisPort), 'shutdown', 'nosave'], { timeoutMs: 15_000 });
  } catch {
    // Already down, or it closed the connection before redis-cli read an answer.
  }
}

/** Boots the node in the background; `rabbitmqctl await_startup` says when it takes connections. */
async function startRabbitNode(servers) {
  const base = join(servers.dir, 'rabbitmq');
  mkdirSync(join(base, 'mnesia'), { recursive: true });
  mkdirSync(join(base, 'log'), { recursive: true });
  writeFileSync(join(base, 'enabled_plugins'), '[].\n');
  // Debian's wrapper runs the server as the rabbitmq user when started by root.
  if (process.getuid?.() === 0) {
    chmodSync(servers.dir, 0o755);
    await run('chown', ['-R', 'rabbitmq:rabbitmq', base]);
  }
  await run('rabbitmq-server', ['-detached'], { env: rabbitEnvironment(servers) });
  // await_startup needs the node registered with epmd, which comes a few seconds after -detached.
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await rabbitmqctl(servers, ['await_startup', '--timeout', '120'], 150_000);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

async function stopRabbitNode(servers) {
  try {
    await rabbitmqctl(servers, ['stop'], 60_000);
  } catch {
    // Never started, or already gone.
  }
}

async function startServers() {
  for (const command of ['redis-server', 'redis-cli', 'rabbitmq-server', 'rabbitmqctl']) await requireCommand(command);
  const servers = {
    dir: join(tmpdir(), `pmatch-faults-${randomBytes(4).toString('hex')}`),
    rabbitNode: `pmatch-faults-${randomBytes(4).toString('hex')}@localhost`,
    rabbitPort: await freePort(),
    rabbitDistPort: await freePort(),
    redisPort: await freePort(),
  };
  mkdirSync(servers.dir, { recursive: true });
  try {
    await startRedis(servers);
    await startRabbitNode(servers);
  } catch (error) {
    await stopServers(servers);
    throw error;
  }
  return servers;
}

async function stopServers(servers) {
  await stopRabbitNode(servers);
  await stopRedis(servers);
  rmSync(servers.dir, { recursive: true, force: true });
}

module.exports = {
  VARIABLES,
  fromEnvironment,
  rabbitUrl,
  redisUrl,
  rabbitmqctl,
  startRedis,
  stopRedis,
  startServers,
  stopServers,
};
