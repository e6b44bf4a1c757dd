import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@pmatch/testkit';

/**
 * The services' Prisma client (packages/db createPrisma) must survive PostgreSQL ending its
 * connections while queries run: each service holds one, and a crash of it is a crash of the
 * service. Run in a process of its own; it touches only a database of its own.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

test('when PostgreSQL ends every connection twenty times while queries and transactions run, then the process survives and queries work again', async () => {
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [join(__dirname, 'support', 'prisma-under-cuts.js')], {
      env: { ...process.env, DATABASE_URL: database.url, CUTS: '20', WORKERS: '20' },
      timeout: 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });

  // On failure the child's last words say how it died (e.g. "Unhandled 'error' event").
  expect({ code: result.code, stderr: result.stderr.split('\n').slice(0, 8).join('\n') }).toEqual({ code: 0, stderr: '' });
  expect(JSON.parse(result.stdout)).toMatchObject({ survived: true });
  expect(JSON.parse(result.stdout).ended).toBeGreaterThan(0);
}, 150_000);
