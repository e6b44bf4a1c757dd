import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The decisions behind scripts/ensure-infra.sh and the test kit's containers: every branch, for every service and purpose. */

interface Facts {
  reachable: boolean;
  local: boolean;
  installed: boolean;
  aptInstallable: boolean;
  dockerReachable: boolean;
}
type Decide = (service: string, facts: Facts, purpose?: string) => { action: string; message: string };
type Found = Record<string, { answers: boolean; local: boolean }>;

const PLAN = join(__dirname, '..', 'infra', 'plan.cjs');

const { decide, SERVICES, PURPOSES, isLocalHost, containersForTests } = require(PLAN) as {
  decide: Decide;
  SERVICES: Record<string, { package: string; image: string; variable: string }>;
  PURPOSES: string[];
  isLocalHost: (host: string) => boolean;
  containersForTests: (found: Found, dockerFound: boolean) => { containers: string[]; unreachable: string[] };
};

/** Every combination of the five facts. */
const FACT_NAMES = ['reachable', 'local', 'installed', 'aptInstallable', 'dockerReachable'] as const;
const ALL_FACTS: Facts[] = Array.from({ length: 2 ** FACT_NAMES.length }, (_, bits) => {
  const facts = {} as Facts;
  FACT_NAMES.forEach((name, index) => (facts[name] = (bits & (1 << index)) !== 0));
  return facts;
});

const nothing: Facts = { reachable: false, local: true, installed: false, aptInstallable: false, dockerReachable: false };
const everything: Facts = { reachable: true, local: true, installed: true, aptInstallable: true, dockerReachable: true };

describe.each(Object.keys(SERVICES))('%s', (service) => {
  const spec = SERVICES[service]!;

  test('when it answers, then it is used, whatever else is true', () => {
    expect(decide(service, everything).action).toBe('use');
    expect(decide(service, { ...nothing, reachable: true, local: false }).action).toBe('use');
  });

  test('when it does not answer and its URL names another machine, then it is only waited for, never started or installed here', () => {
    expect(decide(service, { ...everything, reachable: false, local: false })).toEqual({
      action: 'wait-remote',
      message: expect.stringContaining(spec.variable),
    });
  });

  test('when it is installed here but down, then it is started, before any install or container', () => {
    expect(decide(service, { ...everything, reachable: false }).action).toBe('start');
  });

  test("when it is not installed and Debian's package can be installed, then it is installed, before Docker is tried", () => {
    expect(decide(service, { ...nothing, aptInstallable: true, dockerReachable: true })).toEqual({
      action: 'install',
      message: expect.stringContaining(spec.package),
    });
  });

  test('when it can be neither started nor installed but Docker answers, then it runs in a container', () => {
    expect(decide(service, { ...nothing, dockerReachable: true })).toEqual({ action: 'docker', message: expect.stringContaining(spec.image) });
  });

  test('when nothing is possible, then it fails naming the package, Docker and the variable to point elsewhere', () => {
    const { action, message } = decide(service, nothing);

    expect(action).toBe('fail');
    expect(message).toContain(spec.package);
    expect(message).toContain('Docker');
    expect(message).toContain(spec.variable);
  });
});

describe.each(Object.keys(SERVICES))('%s, for the tests (npm test)', (service) => {
  const spec = SERVICES[service]!;

  test('when it would run in Docker for npm start, then for the tests it is left to testcontainers, naming the image', () => {
    expect(decide(service, { ...nothing, dockerReachable: true }, 'test')).toEqual({
      action: 'testcontainers',
      message: expect.stringContaining(`${spec.image} with testcontainers`),
    });
  });

  test.each(ALL_FACTS.map((facts) => [JSON.stringify(facts), facts] as const))(
    'for the facts %s, the tests get what npm start gets, except that a container is left to testcontainers',
    (_, facts) => {
      const forStart = decide(service, facts, 'start');
      const forTests = decide(service, facts, 'test');

      expect(decide(service, facts)).toEqual(forStart);
      if (forStart.action === 'docker') expect(forTests.action).toBe('testcontainers');
      else expect(forTests).toEqual(forStart);
    },
  );
});

test('the purposes are npm start and npm test', () => {
  expect(PURPOSES).toEqual(['start', 'test']);
});

test('when an unknown service or purpose is asked for, then it throws rather than guess', () => {
  expect(() => decide('mysql', nothing)).toThrow('unknown service mysql');
  expect(() => decide('redis', nothing, 'bench')).toThrow('unknown purpose bench');
});

test("when a URL's host is this machine (loopback, any address, a Unix socket's empty host), then it is local; other hosts are not", () => {
  for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '::1', '0.0.0.0', '']) expect(isLocalHost(host)).toBe(true);
  for (const host of ['db.internal', '10.0.0.5', '::ffff:10.0.0.5', 'localhost.example.com', '128.0.0.1']) expect(isLocalHost(host)).toBe(false);
});

describe("the test kit's choice of containers (jest's global setup)", () => {
  const up = { answers: true, local: true };
  const down = { answers: false, local: true };
  const remoteDown = { answers: false, local: false };
  const allUp: Found = { postgres: up, rabbitmq: up, redis: up };

  test('when every server answers, then none runs in a container, with or without Docker', () => {
    expect(containersForTests(allUp, true)).toEqual({ containers: [], unreachable: [] });
    expect(containersForTests(allUp, false)).toEqual({ containers: [], unreachable: [] });
  });

  test("when servers at this machine's address do not answer and there is Docker, then exactly those run in containers", () => {
    expect(containersForTests({ ...allUp, redis: down }, true)).toEqual({ containers: ['redis'], unreachable: [] });
    expect(containersForTests({ postgres: down, rabbitmq: down, redis: down }, true)).toEqual({
      containers: ['postgres', 'rabbitmq', 'redis'],
      unreachable: [],
    });
  });

  test('when there is no Docker, then none runs in a container and the missing ones are named', () => {
    expect(containersForTests({ ...allUp, postgres: down, rabbitmq: down }, false)).toEqual({ containers: [], unreachable: ['postgres', 'rabbitmq'] });
  });

  test('when a server on another machine does not answer, then it is never replaced by a container', () => {
    expect(containersForTests({ ...allUp, rabbitmq: remoteDown }, true)).toEqual({ containers: [], unreachable: [] });
    expect(containersForTests({ postgres: remoteDown, rabbitmq: down, redis: up }, true)).toEqual({ containers: ['rabbitmq'], unreachable: [] });
  });

  test('when a service is missing from what was found, then it throws rather than guess', () => {
    expect(() => containersForTests({ postgres: up, rabbitmq: up }, true)).toThrow('nothing found for redis');
  });
});

test('when run as the shell script runs it, then it prints the action and the message, and refuses malformed arguments with exit 2', () => {
  expect(execFileSync(process.execPath, [PLAN, 'redis', '0', '1', '0', '0', '1'], { encoding: 'utf8' })).toMatch(
    /^docker\tredis is not installed .*redis:7 in Docker\n$/,
  );
  expect(execFileSync(process.execPath, [PLAN, 'redis', '0', '1', '0', '0', '1', 'start'], { encoding: 'utf8' })).toMatch(/^docker\t/);
  expect(execFileSync(process.execPath, [PLAN, 'redis', '0', '1', '0', '0', '1', 'test'], { encoding: 'utf8' })).toMatch(
    /^testcontainers\tredis is not installed .*redis:7 with testcontainers\n$/,
  );
  expect(() => execFileSync(process.execPath, [PLAN, 'redis', 'yes'], { stdio: 'pipe' })).toThrow(expect.objectContaining({ status: 2 }));
  expect(() => execFileSync(process.execPath, [PLAN, 'redis', '0', '1', '0', '0', '1', 'bench'], { stdio: 'pipe' })).toThrow(
    expect.objectContaining({ status: 2 }),
  );
  expect(() => execFileSync(process.execPath, [PLAN, 'redis', '0', '1', '0', '0', '1', 'test', 'x'], { stdio: 'pipe' })).toThrow(
    expect.objectContaining({ status: 2 }),
  );
});
