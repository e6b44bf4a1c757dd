import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

/**
 * The test kit's global setup around testcontainers (packages/testkit/src/containers.js): which
 * servers it asks for, the variables it points at them, and what it stops. No Docker engine runs
 * here, so testcontainers is replaced by a stand-in that records what it was asked to run; the
 * probes of the servers are real connections to real (or closed) local ports.
 */

interface StartOptions {
  log?: (line: string) => void;
  dockerFound?: () => boolean;
  testcontainers?: unknown;
}
const { startMissingServers, stopStartedServers } = require(join(__dirname, '..', '..', 'packages', 'testkit', 'src', 'containers.js')) as {
  startMissingServers: (options?: StartOptions) => Promise<void>;
  stopStartedServers: () => Promise<void>;
};

const VARIABLES = ['TEST_DATABASE_URL', 'DATABASE_URL', 'TEST_RABBITMQ_URL', 'RABBITMQ_URL', 'TEST_REDIS_URL', 'REDIS_URL'];

interface Asked {
  image: string;
  environment: Record<string, string>;
  ports: number[];
  wait: unknown;
  stopped: boolean;
}

/** A stand-in for the testcontainers module: images in `failing` reject their start with `reason`. */
function fakeTestcontainers(failing: Set<string> = new Set(), reason = 'pull access denied', host = '127.0.0.1') {
  const asked: Asked[] = [];
  let nextPort = 41000;
  class GenericContainer {
    private readonly record: Asked;
    constructor(image: string) {
      this.record = { image, environment: {}, ports: [], wait: undefined, stopped: false };
      asked.push(this.record);
    }
    withEnvironment(environment: Record<string, string>) {
      this.record.environment = environment;
      return this;
    }
    withExposedPorts(...ports: number[]) {
      this.record.ports = ports;
      return this;
    }
    withWaitStrategy(wait: unknown) {
      this.record.wait = wait;
      return this;
    }
    withStartupTimeout() {
      return this;
    }
    async start() {
      await Promise.resolve();
      if (failing.has(this.record.image)) throw new Error(reason);
      const record = this.record;
      const port = nextPort++;
      return {
        getHost: () => host,
        getMappedPort: () => port,
        getId: () => `c0ffee${port}0000000000`,
        stop: async () => {
          record.stopped = true;
          await Promise.resolve();
        },
      };
    }
  }
  const Wait = { forLogMessage: (message: string | RegExp, times: number) => ({ message, times }) };
  return { asked, module: { GenericContainer, Wait } };
}

let listening: Server;
let openPort: number;
let closedPort: number;
const saved: Record<string, string | undefined> = {};

async function listen(): Promise<Server> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const portOf = (server: Server) => (server.address() as { port: number }).port;

beforeAll(async () => {
  listening = await listen();
  openPort = portOf(listening);
  const closed = await listen();
  closedPort = portOf(closed);
  await new Promise((resolve) => closed.close(resolve));
});

afterAll(async () => {
  await new Promise((resolve) => listening.close(resolve));
});

beforeEach(() => {
  for (const variable of VARIABLES) {
    saved[variable] = process.env[variable];
    delete process.env[variable];
  }
  // Every server answers, unless a test says otherwise.
  process.env.TEST_DATABASE_URL = `postgresql://postgres@127.0.0.1:${openPort}/postgres`;
  process.env.TEST_RABBITMQ_URL = `amqp://guest:guest@127.0.0.1:${openPort}`;
  process.env.TEST_REDIS_URL = `redis://127.0.0.1:${openPort}`;
});

afterEach(async () => {
  await stopStartedServers();
  for (const variable of VARIABLES) {
    if (saved[variable] === undefined) delete process.env[variable];
    else process.env[variable] = saved[variable];
  }
});

test('when every server answers, then no container is asked for and nothing is logged or changed', async () => {
  const fake = fakeTestcontainers();
  const lines: string[] = [];
  const before = VARIABLES.map((variable) => process.env[variable]);

  await startMissingServers({ log: (line) => lines.push(line), dockerFound: () => true, testcontainers: fake.module });

  expect(fake.asked).toEqual([]);
  expect(lines).toEqual([]);
  expect(VARIABLES.map((variable) => process.env[variable])).toEqual(before);
});

test('when Redis and PostgreSQL do not answer here and there is Docker, then both run in containers, the variables point at them, and teardown stops them', async () => {
  process.env.TEST_REDIS_URL = `redis://127.0.0.1:${closedPort}`;
  process.env.TEST_DATABASE_URL = `postgresql://postgres@localhost:${closedPort}/postgres`;
  const fake = fakeTestcontainers();
  const lines: string[] = [];

  await startMissingServers({ log: (line) => lines.push(line), dockerFound: () => true, testcontainers: fake.module });

  expect(fake.asked.map(({ image, ports }) => ({ image, ports }))).toEqual([
    { image: 'postgres:15', ports: [5432] },
    { image: 'redis:7', ports: [6379] },
  ]);
  expect(fake.asked[0]!.environment).toEqual({ POSTGRES_HOST_AUTH_METHOD: 'trust' });
  expect(fake.asked[0]!.wait).toEqual({ message: /database system is ready to accept connections/, times: 2 });
  expect(process.env.TEST_DATABASE_URL).toBe('postgresql://postgres@127.0.0.1:41000/postgres');
  expect(process.env.DATABASE_URL).toBe(process.env.TEST_DATABASE_URL);
  expect(process.env.TEST_REDIS_URL).toBe('redis://127.0.0.1:41001');
  expect(process.env.REDIS_URL).toBe(process.env.TEST_REDIS_URL);
  expect(process.env.TEST_RABBITMQ_URL).toBe(`amqp://guest:guest@127.0.0.1:${openPort}`);
  expect(process.env.RABBITMQ_URL).toBeUndefined();
  expect(lines.join('\n')).toContain(`redis does not answer at 127.0.0.1:${closedPort}: starting redis:7 with testcontainers`);

  await stopStartedServers();

  expect(fake.asked.map(({ stopped }) => stopped)).toEqual([true, true]);
});

test("when RabbitMQ runs in a container, then its guest login is let in through Docker's port mapping", async () => {
  process.env.TEST_RABBITMQ_URL = `amqp://guest:guest@[::1]:${closedPort}`;
  const fake = fakeTestcontainers();

  await startMissingServers({ log: () => undefined, dockerFound: () => true, testcontainers: fake.module });

  expect(fake.asked).toEqual([
    expect.objectContaining({
      image: 'rabbitmq:3.13-management',
      ports: [5672],
      environment: { RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-rabbit loopback_users []' },
    }),
  ]);
  expect(process.env.TEST_RABBITMQ_URL).toBe('amqp://guest:guest@127.0.0.1:41000');
});

test("when Docker's host is an IPv6 address, then the container's URL has it in brackets", async () => {
  process.env.TEST_REDIS_URL = `redis://127.0.0.1:${closedPort}`;
  const fake = fakeTestcontainers(new Set(), '', '::1');

  await startMissingServers({ log: () => undefined, dockerFound: () => true, testcontainers: fake.module });

  expect(process.env.TEST_REDIS_URL).toBe('redis://[::1]:41000');
});

test('when a server does not answer here and there is no Docker, then it is named, no container is asked for, and the variables stay', async () => {
  process.env.TEST_REDIS_URL = `redis://127.0.0.1:${closedPort}`;
  const fake = fakeTestcontainers();
  const lines: string[] = [];

  await startMissingServers({ log: (line) => lines.push(line), dockerFound: () => false, testcontainers: fake.module });

  expect(fake.asked).toEqual([]);
  expect(lines).toEqual([`testkit: redis does not answer at 127.0.0.1:${closedPort} and no Docker engine is found: tests that need it will fail`]);
  expect(process.env.TEST_REDIS_URL).toBe(`redis://127.0.0.1:${closedPort}`);
});

test('when a server on another machine does not answer, then it is not replaced (nor even probed)', async () => {
  process.env.TEST_REDIS_URL = 'redis://redis.invalid:6379';
  const fake = fakeTestcontainers();

  await startMissingServers({ log: () => undefined, dockerFound: () => true, testcontainers: fake.module });

  expect(fake.asked).toEqual([]);
  expect(process.env.TEST_REDIS_URL).toBe('redis://redis.invalid:6379');
});

test('when testcontainers cannot start one, then the error names the server, its image, the reason and what to do, the others are stopped, and no variable moves', async () => {
  process.env.TEST_RABBITMQ_URL = `amqp://guest:secret-password@127.0.0.1:${closedPort}`;
  process.env.TEST_REDIS_URL = `redis://127.0.0.1:${closedPort}`;
  const fake = fakeTestcontainers(new Set(['rabbitmq:3.13-management']), 'Could not find a working container runtime strategy');

  const error = await startMissingServers({ log: () => undefined, dockerFound: () => true, testcontainers: fake.module }).then(
    () => undefined,
    (thrown: unknown) => thrown as Error,
  );

  expect(error?.message).toBe(
    `testkit: rabbitmq does not answer at 127.0.0.1:${closedPort}, and testcontainers could not run rabbitmq:3.13-management in its place: ` +
      'Could not find a working container runtime strategy. Make a Docker engine reachable (DOCKER_HOST, or its socket at /var/run/docker.sock), ' +
      'install and start rabbitmq-server, or point TEST_RABBITMQ_URL at a running rabbitmq.',
  );
  expect(error?.message).not.toContain('secret-password');
  expect(fake.asked.find(({ image }) => image === 'redis:7')?.stopped).toBe(true);
  expect(process.env.TEST_REDIS_URL).toBe(`redis://127.0.0.1:${closedPort}`);
});
