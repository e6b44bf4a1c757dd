// Runs once after all test files: drops the run's template database, then stops the containers the
// global setup started (none when every server ran on the machine).
const { Client } = require('pg');
const { stopStartedServers } = require('./src/containers.js');
const { TEMPLATE_VARIABLE, adminUrl } = require('./src/names.js');

module.exports = async function globalTeardown() {
  try {
    await dropTemplate();
  } finally {
    await stopStartedServers();
  }
};

async function dropTemplate() {
  const name = process.env[TEMPLATE_VARIABLE];
  if (!name) return;
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
