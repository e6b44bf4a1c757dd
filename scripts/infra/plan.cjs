'use strict';
/**
 * How `scripts/ensure-infra.sh` gets PostgreSQL, RabbitMQ and Redis running: a pure decision from
 * what was found on the machine, so every branch is tested (scripts/test/infra-plan.test.ts). Plain
 * Node without dependencies: it runs before anything is installed.
 * Reasoning: docs/decisions/0075-infrastructure-from-what-the-machine-has.md.
 */

/** Each service: its Debian package, the Docker image `npm start` runs, and its port inside. */
const SERVICES = {
  postgres: { package: 'postgresql', image: 'postgres:15', containerPort: 5432, variable: 'DATABASE_URL' },
  rabbitmq: { package: 'rabbitmq-server', image: 'rabbitmq:3.13-management', containerPort: 5672, variable: 'RABBITMQ_URL' },
  redis: { package: 'redis-server', image: 'redis:7', containerPort: 6379, variable: 'REDIS_URL' },
};

/**
 * facts: { reachable, local, installed, aptInstallable, dockerReachable } (booleans).
 * Returns { action, message }: action is one of
 *   use          it answers already
 *   wait-remote  its URL names another machine: only waited for, never started here
 *   start        installed here but down: start it with the machine's own commands
 *   install      not installed, Debian's package can be installed (root, apt): install, then start
 *   docker       neither, but a Docker engine answers: run it in a container
 *   fail         none of these: the message names what is missing and what to do
 */
function decide(service, facts) {
  const spec = SERVICES[service];
  if (spec === undefined) throw new Error(`unknown service ${service}`);
  if (facts.reachable) return { action: 'use', message: `${service} answers` };
  if (!facts.local) return { action: 'wait-remote', message: `${service} (${spec.variable}) is on another machine: waiting for it, never started here` };
  if (facts.installed) return { action: 'start', message: `${service} is installed here but not answering: starting it` };
  if (facts.aptInstallable) return { action: 'install', message: `${service} is not installed: installing Debian's ${spec.package}, then starting it` };
  if (facts.dockerReachable)
    return { action: 'docker', message: `${service} is not installed and ${spec.package} cannot be installed here: running ${spec.image} in Docker` };
  return {
    action: 'fail',
    message:
      `${service} is not answering, is not installed, Debian's ${spec.package} cannot be installed here (no apt-get, not root, or no such package), ` +
      `and no Docker engine answers. Install ${spec.package}, start Docker, or point ${spec.variable} at a running ${service}.`,
  };
}

module.exports = { SERVICES, decide };

// `node scripts/infra/plan.cjs SERVICE reachable local installed apt docker` (each 0 or 1):
// prints "ACTION<TAB>MESSAGE" for the shell script.
if (require.main === module) {
  const [service, ...flags] = process.argv.slice(2);
  const [reachable, local, installed, aptInstallable, dockerReachable] = flags.map((flag) => flag === '1');
  if (service === undefined || flags.length !== 5 || flags.some((flag) => flag !== '0' && flag !== '1')) {
    process.stderr.write('usage: node scripts/infra/plan.cjs SERVICE REACHABLE LOCAL INSTALLED APT_INSTALLABLE DOCKER_REACHABLE (each 0 or 1)\n');
    process.exit(2);
  }
  const { action, message } = decide(service, { reachable, local, installed, aptInstallable, dockerReachable });
  process.stdout.write(`${action}\t${message}\n`);
}
