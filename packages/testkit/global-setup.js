// Runs once before all test files: one migrated template database that every test file clones
// (CREATE DATABASE … TEMPLATE is far faster than migrating per file). Its name is unique to this
// run, so two jest runs on one machine never drop each other's template; workers inherit it via
// the environment. Built code is used because `npm test` builds before it tests.
const { randomBytes } = require('node:crypto');
const { migrate, ensureDatabase } = require('@pmatch/db');
const { TEMPLATE_VARIABLE, databaseUrl } = require('./src/names.js');

module.exports = async function globalSetup() {
  const name = `pmatch_tpl_${randomBytes(4).toString('hex')}`;
  process.env[TEMPLATE_VARIABLE] = name;
  const url = databaseUrl(name);
  await ensureDatabase(url);
  await migrate(url);
};
