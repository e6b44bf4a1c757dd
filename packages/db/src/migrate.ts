import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { sql, sqlOn, preparedQuery } from './sql';

export const MIGRATIONS_DIR = join(__dirname, '..', 'prisma', 'migrations');

/** Any constant works; it only has to be the same for every runner of this schema. */
const MIGRATION_LOCK_KEY = 7_204_611_913;

const lock = preparedQuery<{ key: number }>('migrate.lock', (p) => sql`SELECT pg_advisory_lock(${p.key})`);
const unlock = preparedQuery<{ key: number }>('migrate.unlock', (p) => sql`SELECT pg_advisory_unlock(${p.key})`);
const recordApplied = preparedQuery<{ id: string; checksum: string; name: string }>(
  'migrate.record_applied',
  (p) => sql`INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
   VALUES (${p.id}, ${p.checksum}, now(), ${p.name}, 1)`,
);
const updateChecksum = preparedQuery<{ name: string; checksum: string }>(
  'migrate.update_checksum',
  (p) => sql`UPDATE "_prisma_migrations" SET checksum = ${p.checksum} WHERE migration_name = ${p.name} AND finished_at IS NOT NULL`,
);
const databaseExists = preparedQuery<{ name: string }>('migrate.database_exists', (p) => sql`SELECT 1 FROM pg_database WHERE datname = ${p.name}`);

/**
 * Migrations whose comments were edited after release: the checksum of each of their texts, the
 * first released first (the texts differ in comments alone). Such a file must be one of them; its
 * record keeps the first, so that an earlier release's runner (a rollback) finds its own file
 * applied (docs/decisions/0001-sql-migrations-with-our-own-runner.md).
 */
export const EDITED_MIGRATION_CHECKSUMS: Readonly<Record<string, readonly [string, ...string[]]>> = {
  '20261122010000_webhooks': [
    'fbe99bcb4f9591a93e8b81662c20f5b27fe11f2cdcbc4b953c3486d3c1d82952',
    '276072dda8c67efa9cb4cb68c64a3e6ec13b717f3a9dcb696fa386298f0a4552',
  ],
  '20261122020000_service_roles': [
    'f63bfe8e2cbaf603f0ea95ce8bb4e147813390f19232ded94aa79833b4be0d08',
    'cf182ace887029c32642077319cc1c47766ce1bc3775c8dd539009242275c1ef',
  ],
  '20261123020000_least_privilege': [
    '76534b855b20334d5a2ecd2ae6ac88a32c8c840aa845861da482a9ea2f36d01d',
    'd6257b19dcf9dee8d84dc559c1e4eba3858cbd60858885fe1d32cf2ddd850539',
  ],
  '20261123060000_queue_autovacuum': [
    '95e03ae6890b03320cc229ad8daf2394a3284f8ed9b407570281abdca30a8bd7',
    'f1d32390384956e0f00d5a9c3bb930bfaebc86a94b1bcc1f4f1025b0dc0b3c8d',
  ],
  '20261127200000_seller_console': [
    'b0c2981c3e30bcf0ef271cd7537310d186a71f1d207de71bf029680c72d8a583',
    '332876fb0ee3d2135c8c3e4d59f0045d39f966d32d82ddb73a695985f38a983b',
  ],
};

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

/**
 * Applies the SQL migrations in Prisma's layout and records them in `_prisma_migrations` exactly as
 * `prisma migrate deploy` does, so the Prisma CLI can take over wherever its schema engine runs.
 * An advisory lock lets several replicas start at once; each migration is its own transaction.
 */
export async function migrate(
  databaseUrl: string,
  migrationsDir = MIGRATIONS_DIR,
  editedMigrations: Readonly<Record<string, readonly string[]>> = EDITED_MIGRATION_CHECKSUMS,
): Promise<MigrationResult> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const statements = sqlOn(client);
  try {
    await statements.rows(lock, { key: MIGRATION_LOCK_KEY });
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);
    const done = await client.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const checksums = new Map(done.rows.map((r) => [r.migration_name, r.checksum]));
    const names = readdirSync(migrationsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    const result: MigrationResult = { applied: [], alreadyApplied: [] };
    for (const name of names) {
      const sql = readFileSync(join(migrationsDir, name, 'migration.sql'), 'utf8');
      const fileChecksum = createHash('sha256').update(sql).digest('hex');
      const versions = editedMigrations[name];
      const changed = () => new Error(`migration ${name} was changed after it was applied (checksum differs); add a new migration instead`);
      if (versions !== undefined && !versions.includes(fileChecksum)) throw changed();
      const checksum = versions?.[0] ?? fileChecksum;
      const recorded = checksums.get(name);
      if (recorded !== undefined) {
        if (recorded !== checksum && !(versions ?? []).includes(recorded)) throw changed();
        // A runner that recorded the edited text left a record an earlier release's runner refuses.
        if (recorded !== checksum) await statements.count(updateChecksum, { name, checksum });
        result.alreadyApplied.push(name);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await statements.count(recordApplied, { id: randomUUID(), checksum, name });
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(error as Error).message}`, { cause: error });
      }
      result.applied.push(name);
    }
    return result;
  } finally {
    await statements.rows(unlock, { key: MIGRATION_LOCK_KEY }).catch(() => undefined);
    await client.end();
  }
}

/** Creates the database named in the URL if it does not exist (fresh machines, test runs). */
export async function ensureDatabase(databaseUrl: string, template?: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`refusing to create database with unusual name "${name}"`);
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    if ((await sqlOn(admin).rows(databaseExists, { name })).length === 0) {
      const from = template === undefined ? '' : ` TEMPLATE "${template.replace(/"/g, '')}"`;
      await admin.query(`CREATE DATABASE "${name}"${from}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by a concurrent runner
      });
    }
  } finally {
    await admin.end();
  }
}
