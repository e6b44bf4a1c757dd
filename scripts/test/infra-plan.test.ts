import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The decision behind scripts/ensure-infra.sh: every branch, for every service. */

interface Facts {
  reachable: boolean;
  local: boolean;
  installed: boolean;
  aptInstallable: boolean;
  dockerReachable: boolean;
}
type Decide = (service: string, facts: Facts) => { action: string; message: string };

const PLAN = join(__dirname, '..', 'infra', 'plan.cjs');

const { decide, SERVICES } = require(PLAN) as { decide: Decide; SERVICES: Record<string, { package: string; image: string; variable: string }> };

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

test('when an unknown service is asked for, then it throws rather than guess', () => {
  expect(() => decide('mysql', nothing)).toThrow('unknown service mysql');
});

test('when run as the shell script runs it, then it prints the action and the message, and refuses malformed arguments with exit 2', () => {
  expect(execFileSync(process.execPath, [PLAN, 'redis', '0', '1', '0', '0', '1'], { encoding: 'utf8' })).toMatch(
    /^docker\tredis is not installed .*redis:7 in Docker\n$/,
  );
  expect(() => execFileSync(process.execPath, [PLAN, 'redis', 'yes'], { stdio: 'pipe' })).toThrow(expect.objectContaining({ status: 2 }));
});
