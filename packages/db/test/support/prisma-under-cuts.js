// Run by packages/db/test/connection-cuts.test.ts as a process of its own (a crash must not take jest with
// it): the services' Prisma client (createPrisma) under concurrent queries and transactions while
// every connection to its database is ended again and again, as a PostgreSQL restart, a failover
// or an operator's pg_terminate_backend does. Prints one JSON line and exits 0 if the process
// survived and queries work again afterwards.
const { join } = require('node:path');

const root = join(__dirname, '..', '..', '..', '..');
const { createPrisma } = require(join(root, 'packages', 'db', 'dist', 'index.js'));
const { Client } = require(require.resolve('pg', { paths: [join(root, 'packages', 'db')] }));

const databaseUrl = process.env.DATABASE_URL;
const cuts = Number(process.env.CUTS ?? 20);
const workers = Number(process.env.WORKERS ?? 20);

async function main() {
  const prisma = createPrisma(databaseUrl, { poolSize: 5, onIdleConnectionError: () => undefined });
  const admin = new Client({ connectionString: databaseUrl });
  admin.on('error', () => undefined);
  await admin.connect();
  const counts = { ok: 0, failed: 0, ended: 0 };
  let stop = false;
  const work = async (i) => {
    while (!stop) {
      try {
        if (i % 2 === 0) await prisma.$queryRaw`SELECT 1 AS one FROM pg_sleep(0.003)`;
        else await prisma.$transaction(async (tx) => tx.$queryRaw`SELECT 1 AS one FROM pg_sleep(0.003)`);
        counts.ok += 1;
      } catch {
        counts.failed += 1;
      }
    }
  };
  const running = Array.from({ length: workers }, (_, i) => work(i));
  for (let i = 0; i < cuts; i += 1) {
    // Cut only once queries flow again, so every cut meets connections in use.
    const before = counts.ok;
    for (let waited = 0; counts.ok === before && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    const res = await admin.query(
      'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    counts.ended += res.rows[0].n;
  }
  stop = true;
  await Promise.all(running);
  await prisma.$queryRaw`SELECT 1 AS one`;
  await prisma.$transaction(async (tx) => tx.$queryRaw`SELECT 1 AS one`);
  await prisma.$disconnect();
  await admin.end();
  process.stdout.write(`${JSON.stringify({ survived: true, ...counts })}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(2);
});
