// Creates the database in DATABASE_URL if needed and applies the SQL migrations of packages/db
// (docs/decisions/0001-sql-migrations-with-our-own-runner.md). Prints one line; exits 1 with the reason on failure.
// Needs packages/db built (`npm run build`); the Docker image runs it as the one-shot `migrate`.
// SERVICE_ROLE_PASSWORD, when set, becomes the password of every service role, for hosts that
// authenticate by password (docker compose); production sets one per role instead.
// RABBITMQ_URL, when set, is a broker user with configure rights (pmatch_topology): the exchanges,
// queues and dead-letter queues under AMQP_PREFIX are declared through it, for the services' own
// users may not (docs/decisions/0087-one-broker-user-per-service.md).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const databaseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/matching';

function describe(url) {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}

try {
  const { ensureDatabase, migrate } = require('../packages/db/dist/index.js');
  await ensureDatabase(databaseUrl);
  const { applied, alreadyApplied } = await migrate(databaseUrl);
  const target = describe(databaseUrl);
  if (process.env.SERVICE_ROLE_PASSWORD) await setServiceRolePasswords(databaseUrl, process.env.SERVICE_ROLE_PASSWORD);
  if (applied.length === 0) {
    console.log(`migrate: ${target} up to date (${alreadyApplied.length} migrations already applied)`);
  } else {
    console.log(`migrate: ${target} applied ${applied.length} (${applied.join(', ')}); ${alreadyApplied.length} already applied`);
  }
  if (process.env.RABBITMQ_URL) await declareTopology(process.env.RABBITMQ_URL, process.env.AMQP_PREFIX ?? '');
} catch (error) {
  const message = error?.code === 'MODULE_NOT_FOUND' ? `${error.message}\n(build first: npm run build)` : (error?.message ?? String(error));
  console.error(`migrate: FAILED on ${describe(databaseUrl)}: ${message}`);
  process.exit(1);
}

async function setServiceRolePasswords(url, password) {
  const { Client } = require('../packages/db/node_modules/pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (const role of ['pmatch_orders_api', 'pmatch_bank_ingest', 'pmatch_matcher', 'pmatch_webhook_dispatcher', 'pmatch_ops']) {
      const quoted = (await client.query('SELECT quote_literal($1) AS q', [password])).rows[0].q;
      await client.query(`ALTER ROLE ${role} PASSWORD ${quoted}`);
    }
  } finally {
    await client.end();
  }
}

async function declareTopology(url, prefix) {
  const { Broker } = require('../packages/platform/dist/index.js');
  try {
    await Broker.declareTopology(url, prefix);
  } catch (error) {
    throw new Error(`declaring the RabbitMQ topology at ${new URL(url).host}: ${error?.message ?? String(error)}`, { cause: error });
  }
  console.log(`migrate: RabbitMQ topology at ${new URL(url).host}${prefix ? ` (AMQP_PREFIX ${prefix})` : ''} declared`);
}
