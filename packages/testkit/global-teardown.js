const { Client } = require('pg');
const { TEMPLATE_VARIABLE, adminUrl } = require('./src/names.js');

module.exports = async function globalTeardown() {
  const name = process.env[TEMPLATE_VARIABLE];
  if (!name) return;
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
};
