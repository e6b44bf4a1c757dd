import { execFile } from 'node:child_process';
import path from 'node:path';

/** The built CLI, run exactly as an operator runs it. */
const MAIN = path.resolve(__dirname, '../dist/main.js');

export const TEST_SECRETS_KEY = 'ops-test-secrets-key-0123456789';

export interface OpsRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** `env` adds to or overrides the environment, e.g. the broker settings of `shop-order pay`. */
export function runOps(databaseUrl: string, args: readonly string[], env: Record<string, string> = {}): Promise<OpsRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...process.env, DATABASE_URL: databaseUrl, SECRETS_KEY: TEST_SECRETS_KEY, ...env } },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') {
          reject(error);
          return;
        }
        resolve({ exitCode: error === null ? 0 : Number(error.code), stdout, stderr });
      },
    );
  });
}

/** Asserts the CLI's success contract: exit 0, nothing on stderr, exactly one JSON object on stdout. */
export async function runOpsOk(databaseUrl: string, args: readonly string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const run = await runOps(databaseUrl, args, env);
  if (run.exitCode !== 0) throw new Error(`ops ${args.join(' ')} exited ${run.exitCode}: ${run.stderr}`);
  expect(run.stderr).toBe('');
  const lines = run.stdout.split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe('');
  const output: unknown = JSON.parse(lines[0] ?? '');
  expect(output).toEqual(expect.any(Object));
  expect(Array.isArray(output)).toBe(false);
  return output as Record<string, unknown>;
}

export interface OpsFailure {
  code: string;
  message: string;
  param?: string;
}

/**
 * Asserts the CLI's failure contract: the given exit code, nothing on stdout, and exactly one line
 * of JSON on stderr, `{"error":{"code","message"[,"param"]}}`, with no stack trace; returns the error.
 */
export function expectFailure(run: OpsRun, exitCode: number): OpsFailure {
  expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({ exitCode, stdout: '' });
  expect(run.stderr).toMatch(/^[^\n]+\n$/);
  const body = JSON.parse(run.stderr) as { error: OpsFailure };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toEqual({
    code: expect.any(String),
    message: expect.any(String),
    ...(body.error.param === undefined ? {} : { param: expect.any(String) }),
  });
  expect(body.error.message).not.toMatch(/\n|\s+at \S+ \(/);
  return body.error;
}
