// The fault suite's set-up: the root configuration's template database, then a RabbitMQ node and a
// Redis server of the suite's own (support/servers.js). Test workers inherit this process's
// environment, so TEST_RABBITMQ_URL and TEST_REDIS_URL point the testkit and every service it starts
// at them.
const rootSetup = require('../../packages/testkit/global-setup.js');
const { VARIABLES, rabbitUrl, redisUrl, startServers } = require('./support/servers.js');

module.exports = async function faultSuiteSetup() {
  await rootSetup();
  const servers = await startServers();
  process.env[VARIABLES.dir] = servers.dir;
  process.env[VARIABLES.rabbitNode] = servers.rabbitNode;
  process.env[VARIABLES.rabbitPort] = String(servers.rabbitPort);
  process.env[VARIABLES.rabbitDistPort] = String(servers.rabbitDistPort);
  process.env[VARIABLES.redisPort] = String(servers.redisPort);
  process.env.TEST_RABBITMQ_URL = rabbitUrl(servers);
  process.env.TEST_REDIS_URL = redisUrl(servers);
};
