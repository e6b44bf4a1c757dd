'use strict';
/**
 * How `scripts/ensure-infra.sh` gets PostgreSQL, RabbitMQ and Redis running, and which of them the
 * test kit's jest global setup runs with testcontainers: pure decisions from what was found on the
 * machine, so every branch is tested (scripts/test/infra-plan.test.ts). Plain Node without
 * dependencies: it runs before anything is installed.
 * Reasoning: docs/decisions/0075-infrastructure-from-what-the-machine-has.md and
 * docs/decisions/0090-tests-run-missing-servers-with-testcontainers.md.
 */

/**
 * Each service: its Debian package, the Docker image both container paths run, its port inside,
 * the variable naming its URL, and the container environment that lets the URL's default login in
 * through Docker's port mapping (ensure-infra.sh's start_container passes the same).
 */
const SERVICES = {
  postgres: {
    package: 'postgresql',
    image: 'postgres:15',
    containerPort: 5432,
    variable: 'DATABASE_URL',
    containerEnvironment: { POSTGRES_HOST_AUTH_METHOD: 'trust' },
  },
  rabbitmq: {
    package: 'rabbitmq-server',
    image: 'rabbitmq:3.13-management',
    containerPort: 5672,
    variable: 'RABBITMQ_URL',
    containerEnvironment: { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-rabbit loopback_users []' },
  },
  redis: { package: 'redis-server', image: 'redis:7', containerPort: 6379, variable: 'REDIS_URL', containerEnvironment: {} },
};

/** What the set-up is for: `start` (npm start) or `test` (npm test). */
const PURPOSES = ['start', 'test'];

/**
 * facts: { reachable, local, installed, aptInstallable, dockerReachable } (booleans); purpose: one
 * of PURPOSES (default `start`). Returns { action, message }: action is one of
 *   use          it answers already
 *   wait-remote  its URL names another machine: only waited for, never started here
 *   start        installed here but down: start it with the machine's own commands
 *   install      not installed, Debian's package can be installed (root, apt): install, then start
 *   docker       neither, but a Docker engine answers: run it in a container (purpose `start`)
 *   testcontainers  the same facts, purpose `test`: left to the test kit, whose jest global setup
 *                runs it with testcontainers (containersForTests)
 *   fail         none of these: the message names what is missing and what to do
 */
function decide(service, facts, purpose = 'start') {
  const spec = SERVICES[service];
  if (spec === undefined) throw new Error(`unknown service ${service}`);
  if (!PURPOSES.includes(purpose)) throw new Error(`unknown purpose ${purpose}`);
  if (facts.reachable) return { action: 'use', message: `${service} answers` };
  if (!facts.local) return { action: 'wait-remote', message: `${service} (${spec.variable}) is on another machine: waiting for it, never started here` };
  if (facts.installed) return { action: 'start', message: `${service} is installed here but not answering: starting it` };
  if (facts.aptInstallable) return { action: 'install', message: `${service} is not installed: installing Debian's ${spec.package}, then starting it` };
  if (facts.dockerReachable && purpose === 'test')
    return {
      action: 'testcontainers',
      message: `${service} is not installed and ${spec.package} cannot be installed here: the tests run ${spec.image} with testcontainers`,
    };
  if (facts.dockerReachable)
    return { action: 'docker', message: `${service} is not installed and ${spec.package} cannot be installed here: running ${spec.image} in Docker` };
  return {
    action: 'fail',
    message:
      `${service} is not answering, is not installed, Debian's ${spec.package} cannot be installed here (no apt-get, not root, or no such package), ` +
      `and no Docker engine answers. Install ${spec.package}, start Docker, or point ${spec.variable} at a running ${service}.`,
  };
}

/** Whether a URL's host names this machine (an empty host, as in a Unix-socket URL, does). */
function isLocalHost(host) {
  return host === '' || host === 'localhost' || host === '::1' || host === '0.0.0.0' || /^127\./.test(host);
}

/**
 * The test kit's choice, in jest's global setup: which services to run with testcontainers.
 * found: { [service]: { answers, local } } for each of SERVICES, at the URL the tests use;
 * dockerFound: whether a Docker engine is configured or its socket is there. A service that
 * answers is used; one whose URL names another machine is never replaced (the set-up waited for
 * it); one not answering at this machine's address is what the set-up left to the test kit, so it
 * runs in a container when there is Docker (`containers`), and is only named (`unreachable`) when
 * there is none: the tests then run as they would without it. Names are in SERVICES' order.
 */
function containersForTests(found, dockerFound) {
  const down = Object.keys(SERVICES).filter((service) => {
    const facts = found[service];
    if (facts === undefined) throw new Error(`nothing found for ${service}`);
    return !facts.answers && facts.local;
  });
  return dockerFound ? { containers: down, unreachable: [] } : { containers: [], unreachable: down };
}

module.exports = { SERVICES, PURPOSES, decide, isLocalHost, containersForTests };

// `node scripts/infra/plan.cjs SERVICE reachable local installed apt docker [PURPOSE]` (each flag 0
// or 1, PURPOSE start or test, default start): prints "ACTION<TAB>MESSAGE" for the shell script.
if (require.main === module) {
  const [service, ...rest] = process.argv.slice(2);
  const flags = rest.slice(0, 5);
  const purpose = rest[5] ?? 'start';
  const [reachable, local, installed, aptInstallable, dockerReachable] = flags.map((flag) => flag === '1');
  if (service === undefined || flags.length !== 5 || rest.length > 6 || flags.some((flag) => flag !== '0' && flag !== '1') || !PURPOSES.includes(purpose)) {
    process.stderr.write(
      'usage: node scripts/infra/plan.cjs SERVICE REACHABLE LOCAL INSTALLED APT_INSTALLABLE DOCKER_REACHABLE [start|test] (each flag 0 or 1)\n',
    );
    process.exit(2);
  }
  const { action, message } = decide(service, { reachable, local, installed, aptInstallable, dockerReachable }, purpose);
  process.stdout.write(`${action}\t${message}\n`);
}
