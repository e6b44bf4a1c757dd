// The fault suite's teardown: stops its own RabbitMQ node and Redis server, even when the run was
// cut short in the middle of a fault, then the root configuration's teardown drops the template
// database.
const rootTeardown = require('../../packages/testkit/global-teardown.js');
const { fromEnvironment, stopServers } = require('./support/servers.js');

module.exports = async function faultSuiteTeardown() {
  try {
    await stopServers(fromEnvironment());
  } finally {
    await rootTeardown();
  }
};
