// The servers the tests need that this machine does not run, started with testcontainers by jest's
// global setup and stopped by its teardown (docs/decisions/0090-tests-run-missing-servers-with-testcontainers.md).
// Which ones is decided by containersForTests (scripts/infra/plan.cjs); with every server answering
// this costs three local connection attempts and loads nothing else. Plain JS so jest's globalSetup
// can load it untransformed.
const { existsSync, statSync } = require('node:fs');
const { connect } = require('node:net');
const { homedir, userInfo } = require('node:os');
const path = require('node:path');
const { SERVICES, containersForTests, isLocalHost } = require('../../../scripts/infra/plan.cjs');
const { baseDatabaseUrl, rabbitmqUrl, redisUrl } = require('./names.js');

/** Where setup and teardown, run by jest in one process, keep the started containers. */
const STARTED = Symbol.for('pmatch.testkit.containers');

/** Per service: what the tests use now, what a container's URL is, the variables that carry it, and when it is ready. */
const TEST_SIDE = {
  postgres: {
    url: baseDatabaseUrl,
    containerUrl: (host, port) => `postgresql://postgres@${host}:${port}/postgres`,
    variables: ['TEST_DATABASE_URL', 'DATABASE_URL'],
    // The image's entrypoint runs a server once to initialise, then the real one: the second line counts.
    ready: [/database system is ready to accept connections/, 2],
  },
  rabbitmq: {
    url: rabbitmqUrl,
    containerUrl: (host, port) => `amqp://guest:guest@${host}:${port}`,
    variables: ['TEST_RABBITMQ_URL', 'RABBITMQ_URL'],
    ready: ['Server startup complete', 1],
  },
  redis: {
    url: redisUrl,
    containerUrl: (host, port) => `redis://${host}:${port}`,
    variables: ['TEST_REDIS_URL', 'REDIS_URL'],
    ready: ['Ready to accept connections', 1],
  },
};

const STARTUP_TIMEOUT_MS = 120_000;

/** host and port of a URL, without its credentials; an empty host (a Unix socket) is this machine. */
function address(service) {
  const url = new URL(TEST_SIDE[service].url());
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? '127.0.0.1' : host, port: Number(url.port || SERVICES[service].containerPort), local: isLocalHost(host) };
}

/** Whether something accepts a TCP connection at host:port within two seconds. */
function answers(host, port) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Whether testcontainers has a Docker engine to try: configured, or a socket where it looks for one. */
function dockerFound() {
  if (process.env.DOCKER_HOST || existsSync(path.join(homedir(), '.testcontainers.properties'))) return true;
  const sockets = [
    '/var/run/docker.sock',
    process.env.XDG_RUNTIME_DIR && path.join(process.env.XDG_RUNTIME_DIR, 'docker.sock'),
    path.join(homedir(), '.docker', 'run', 'docker.sock'),
    path.join(homedir(), '.docker', 'desktop', 'docker.sock'),
    `/run/user/${userInfo().uid}/docker.sock`,
  ];
  return sockets.some((socket) => {
    try {
      return Boolean(socket) && statSync(socket).isSocket();
    } catch {
      return false;
    }
  });
}

async function startOne(service, { GenericContainer, Wait }) {
  const spec = SERVICES[service];
  const [message, times] = TEST_SIDE[service].ready;
  const container = await new GenericContainer(spec.image)
    .withEnvironment(spec.containerEnvironment)
    .withExposedPorts(spec.containerPort)
    .withWaitStrategy(Wait.forLogMessage(message, times))
    .withStartupTimeout(STARTUP_TIMEOUT_MS)
    .start();
  const host = container.getHost();
  // An IPv6 address goes in brackets in a URL.
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return { service, container, url: TEST_SIDE[service].containerUrl(urlHost, container.getMappedPort(spec.containerPort)) };
}

/**
 * Starts a container for each server not answering at this machine's address, when there is a
 * Docker engine to try, and points the TEST_ variables (and the services' own, for processes the
 * tests start) at them. Without Docker it only says which servers are missing and changes nothing.
 * Throws, naming the server, its image and what to do, when a container cannot be started; the
 * ones already started are stopped first. `options` replaces the log, the Docker check and the
 * testcontainers module (its tests have no Docker engine).
 */
async function startMissingServers(options = {}) {
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  const services = Object.keys(SERVICES);
  const addresses = Object.fromEntries(services.map((service) => [service, address(service)]));
  // Another machine's server is never replaced, so only this machine's are asked.
  const found = Object.fromEntries(
    await Promise.all(
      services.map(async (service) => {
        const { host, port, local } = addresses[service];
        return [service, { local, answers: local && (await answers(host, port)) }];
      }),
    ),
  );
  const docker = Object.values(found).some((facts) => !facts.answers && facts.local) && (options.dockerFound ?? dockerFound)();
  const { containers, unreachable } = containersForTests(found, docker);
  for (const service of unreachable) {
    log(
      `testkit: ${service} does not answer at ${addresses[service].host}:${addresses[service].port} and no Docker engine is found: tests that need it will fail`,
    );
  }
  if (containers.length === 0) return;

  const notStarted = (error) => new Error(containers.map((service) => cannotStart(service, addresses[service], error)).join('\n'));
  let testcontainers = options.testcontainers;
  try {
    testcontainers ??= require('testcontainers');
  } catch (error) {
    throw notStarted(error);
  }
  for (const service of containers) {
    log(
      `testkit: ${service} does not answer at ${addresses[service].host}:${addresses[service].port}: starting ${SERVICES[service].image} with testcontainers`,
    );
  }
  const results = await Promise.allSettled(containers.map((service) => startOne(service, testcontainers)));
  const started = results.filter((result) => result.status === 'fulfilled').map((result) => result.value);
  globalThis[STARTED] = started.map(({ container }) => container);
  const failures = results.flatMap((result, index) =>
    result.status === 'rejected' ? [cannotStart(containers[index], addresses[containers[index]], result.reason)] : [],
  );
  if (failures.length > 0) {
    await stopStartedServers();
    throw new Error(failures.join('\n'));
  }
  for (const { service, container, url } of started) {
    for (const variable of TEST_SIDE[service].variables) process.env[variable] = url;
    log(
      `testkit: ${service} runs in container ${container.getId().slice(0, 12)} at ${container.getHost()}:${container.getMappedPort(SERVICES[service].containerPort)}`,
    );
  }
}

function cannotStart(service, { host, port }, error) {
  const spec = SERVICES[service];
  const reason = error instanceof Error ? error.message : String(error);
  return (
    `testkit: ${service} does not answer at ${host}:${port}, and testcontainers could not run ${spec.image} in its place: ${reason}. ` +
    `Make a Docker engine reachable (DOCKER_HOST, or its socket at /var/run/docker.sock), install and start ${spec.package}, or point ${TEST_SIDE[service].variables[0]} at a running ${service}.`
  );
}

/** Stops whatever startMissingServers started in this process; safe to call when it started nothing. */
async function stopStartedServers() {
  const containers = globalThis[STARTED] ?? [];
  globalThis[STARTED] = [];
  await Promise.allSettled(containers.map((container) => container.stop()));
}

module.exports = { startMissingServers, stopStartedServers };
