// `prisma generate` needs no schema engine, but the CLI insists on finding one before it starts.
// Any existing file satisfies that check (docs/decisions/0001-sql-migrations-with-our-own-runner.md); we point it at node itself.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath, PRISMA_HIDE_UPDATE_MESSAGE: '1' };
const result = spawnSync(process.execPath, [join(packageDir, 'node_modules/prisma/build/index.js'), 'generate'], {
  cwd: packageDir,
  env,
  stdio: ['ignore', 'inherit', 'inherit'],
});
process.exit(result.status ?? 1);
