// Runs once before all test files. First, any server the tests need that does not answer at this
// machine's address is started with testcontainers when there is a Docker engine (src/containers.js;
// `npm test` leaves to it what `npm start` would run in Docker), and the TEST_ variables point at it.
// Then one migrated template database that every test file clones (CREATE DATABASE … TEMPLATE is
// far faster than migrating per file). Its name is unique to this run, so two jest runs on one
// machine never drop each other's template; workers inherit it, and the containers' URLs, via the
// environment. Built code is used because `npm test` builds before it tests.
const { randomBytes } = require('node:crypto');
const { migrate, ensureDatabase } = require('@pmatch/db');
const { startMissingServers, stopStartedServers } = require('./src/containers.js');
const { TEMPLATE_VARIABLE, databaseUrl } = require('./src/names.js');

module.exports = async function globalSetup() {
  await startMissingServers();
  try {
    const name = `pmatch_tpl_${randomBytes(4).toString('hex')}`;
    process.env[TEMPLATE_VARIABLE] = name;
    const url = databaseUrl(name);
    await ensureDatabase(url);
    await migrate(url);
  } catch (error) {
    // jest runs no teardown after a failed setup: containers started here would outlive the run.
    await stopStartedServers();
    throw error;
  }
};
