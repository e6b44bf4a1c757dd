// The fault suite's teardown: first make sure the machine's RabbitMQ and Redis run again, even when
// the run was cut short in the middle of a fault (a stopped RabbitMQ application keeps its port
// closed while the node lives, so `rabbitmqctl start_app` comes before scripts/ensure-infra.sh),
// then the root configuration's teardown drops the template database.
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');
const rootTeardown = require('../../packages/testkit/global-teardown.js');

module.exports = async function faultSuiteTeardown() {
  const root = join(__dirname, '..', '..');
  try {
    execFileSync('rabbitmqctl', ['-q', 'start_app'], { stdio: 'ignore', timeout: 120_000 });
  } catch {
    // Not installed here, or the node is down: ensure-infra.sh starts it.
  }
  execFileSync('bash', [join(root, 'scripts', 'ensure-infra.sh')], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 200_000 });
  await rootTeardown();
};
