// Plain JS so jest's globalSetup can load it untransformed.
const TEMPLATE_VARIABLE = 'PMATCH_TEST_TEMPLATE_DATABASE';

function templateDatabase() {
  const name = process.env[TEMPLATE_VARIABLE];
  if (!name) throw new Error(`${TEMPLATE_VARIABLE} is not set: run tests through jest (its globalSetup creates the template)`);
  return name;
}

function baseDatabaseUrl() {
  return process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
}

/** Broker and Redis addresses for tests: the TEST_ variables first, then the services' own, then the local defaults. */
function rabbitmqUrl() {
  return process.env.TEST_RABBITMQ_URL ?? process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
}

function redisUrl() {
  return process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

function databaseUrl(name) {
  const url = new URL(baseDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

function adminUrl() {
  return databaseUrl('postgres');
}

module.exports = { TEMPLATE_VARIABLE, templateDatabase, baseDatabaseUrl, databaseUrl, adminUrl, rabbitmqUrl, redisUrl };
