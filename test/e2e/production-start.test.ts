import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  DATABASE_ROLE,
  RABBITMQ_URL,
  REPO_ROOT,
  SERVICES,
  cleanUpBroker,
  createTestDatabase,
  databaseUrlAs,
  freePort,
  uniqueName,
  waitFor,
  type ServiceName,
  type TestDatabase,
} from '@pmatch/testkit';

/**
 * What a production process refuses at start: no SECRETS_KEY of its own, and a database user
 * that is not its own role (a superuser, another service's role). Each is the built program as
 * a container runs it; a refusal is an exit with one clear line, never a stack trace.
 */

let db: TestDatabase;
/** The one service that gets as far as the broker declares its names under this prefix, removed after. */
const AMQP_PREFIX = `${uniqueName('t')}.`;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await cleanUpBroker(AMQP_PREFIX).catch(() => undefined);
  await db?.drop();
});

interface Exit {
  code: number | null;
  output: string;
}

/** Runs a program until it exits (or, if `untilReady` answers first, until it is ready; then it is stopped). */
function run(program: string, args: string[], env: Record<string, string>, untilReady?: string): Promise<Exit & { ready: boolean }> {
  return new Promise((resolve, reject) => {
    const { SECRETS_KEY: _unset, SECRETS_KEYS_OLD: _unsetToo, ...inherited } = process.env;
    const isolated = { LOG_LEVEL: 'warn', RABBITMQ_URL, AMQP_PREFIX, REDIS_PREFIX: `pmatch-test:${AMQP_PREFIX}` };
    const child = spawn(process.execPath, [program, ...args], { env: { ...inherited, ...isolated, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let ready = false;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output, ready }));
    if (untilReady !== undefined) {
      waitFor(
        async () => {
          if (child.exitCode !== null) return true;
          const res = await fetch(untilReady).catch(() => undefined);
          return res?.status === 200 ? true : undefined;
        },
        { timeoutMs: 60_000, what: 'the service to be ready' },
      ).then(
        () => {
          ready = child.exitCode === null;
          child.kill('SIGTERM');
        },
        () => child.kill('SIGKILL'),
      );
    }
  });
}

const serviceMain = (service: ServiceName) => join(REPO_ROOT, 'services', service, 'dist', 'main.js');
const OPS_MAIN = join(REPO_ROOT, 'packages', 'ops', 'dist', 'main.js');
const PRODUCTION_KEY = 'a-production-secrets-key-of-our-own';

describe('SECRETS_KEY in production', () => {
  test.each([...SERVICES])('when %s starts in production without SECRETS_KEY, then it exits 1 naming SECRETS_KEY, with no stack trace', async (service) => {
    // Every other setting production requires is given (the dispatcher's mail relay), so SECRETS_KEY is what is missing.
    const exit = await run(serviceMain(service), [], {
      NODE_ENV: 'production',
      SMTP_URL: 'smtp://127.0.0.1:1',
      DATABASE_URL: databaseUrlAs(db.url, DATABASE_ROLE[service]),
    });

    expect(exit.code).toBe(1);
    expect(exit.output).toContain(`${service} refuses its configuration: invalid configuration:`);
    expect(exit.output).toContain('SECRETS_KEY: is required in production and has no default');
    expect(exit.output).not.toMatch(/\n\s+at /);
  });

  test('when the ops CLI runs in production without SECRETS_KEY, then it exits 1 with one line naming SECRETS_KEY', async () => {
    const exit = await run(OPS_MAIN, ['adapter', 'list'], { NODE_ENV: 'production', DATABASE_URL: databaseUrlAs(db.url, DATABASE_ROLE.ops) });

    expect(exit.code).toBe(1);
    expect(exit.output).toMatch(/^[^\n]*\n$/);
    expect(JSON.parse(exit.output)).toEqual({
      error: {
        code: 'configuration_invalid',
        message: expect.stringMatching(/^invalid configuration: SECRETS_KEY: is required in production and has no default /),
      },
    });
  });
});

describe('database role in production', () => {
  const asRole = (role: string) => ({ NODE_ENV: 'production', SECRETS_KEY: PRODUCTION_KEY, DATABASE_URL: databaseUrlAs(db.url, role) });

  test('when orders-api starts in production as postgres (a superuser), then it exits 1 saying which role to use', async () => {
    const exit = await run(serviceMain('orders-api'), [], { ...asRole('postgres'), ORDERS_API_PORT: String(await freePort()) });

    expect(exit.code).toBe(1);
    expect(exit.output).toContain('orders-api refuses to run in production as the superuser postgres: connect as pmatch_orders_api');
    expect(exit.output).not.toMatch(/\n\s+at |"stack"/);
  });

  test("when the matcher starts in production as the webhook dispatcher's role, then it exits 1 naming that role", async () => {
    const exit = await run(serviceMain('matcher'), [], { ...asRole(DATABASE_ROLE['webhook-dispatcher']), MATCHER_PORT: String(await freePort()) });

    expect(exit.code).toBe(1);
    expect(exit.output).toContain('matcher refuses to run in production as pmatch_webhook_dispatcher, which has the rights of pmatch_webhook_dispatcher');
  });

  test('when the ops CLI runs in production as postgres, then it refuses; as pmatch_ops it works', async () => {
    const asPostgres = await run(OPS_MAIN, ['adapter', 'list'], asRole('postgres'));
    const asOps = await run(OPS_MAIN, ['adapter', 'list'], asRole(DATABASE_ROLE.ops));

    expect(asPostgres).toMatchObject({
      code: 1,
      output: expect.stringMatching(
        /^\{"error":\{"code":"database_role_refused","message":"ops refuses to run in production as the superuser postgres: connect as pmatch_ops/,
      ),
    });
    expect(asOps).toMatchObject({ code: 0, output: '{"object":"list","data":[],"has_more":false}\n' });
  });

  test('when orders-api starts in production as its own role with its own SECRETS_KEY, then it becomes ready (the checks refuse only what they should)', async () => {
    const adminPort = await freePort();

    const exit = await run(
      serviceMain('orders-api'),
      [],
      { ...asRole(DATABASE_ROLE['orders-api']), ORDERS_API_PORT: String(await freePort()), ORDERS_API_ADMIN_PORT: String(adminPort) },
      `http://127.0.0.1:${adminPort}/readyz`,
    );

    expect({ ready: exit.ready, output: exit.output }).toEqual({ ready: true, output: expect.not.stringContaining('refuses') });
  });
});
