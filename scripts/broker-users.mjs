// One RabbitMQ user per service, with only the rights its work needs
// (docs/decisions/0087-one-broker-user-per-service.md; the rights: packages/platform/src/broker-permissions.ts).
//   node scripts/broker-users.mjs                   on this machine's broker (root, rabbitmqctl): creates or
//                                                   updates the users, passwords localBrokerPassword(user),
//                                                   for any AMQP_PREFIX; quiet when they are there already
//   node scripts/broker-users.mjs --compose         the definitions file docker compose loads (stdout)
//   node scripts/broker-users.mjs --commands        rabbitmqctl commands for another broker, for AMQP_PREFIX
//                                                   exactly, with <password> placeholders (stdout)
// Needs packages/platform built (`npm run build`).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const platform = require('../packages/platform/dist/index.js');
const amqp = require('../packages/platform/node_modules/amqplib');

const rabbitmqUrl = process.env.RABBITMQ_URL || 'amqp://guest:guest@127.0.0.1:5672';
const COMPOSE_PASSWORD = (user) => `${user}-compose-dev-only`;

/** Definitions (users, permissions) for one vhost, in RabbitMQ's import format. */
function definitions(vhost, prefixPattern, passwordOf, extraUsers = []) {
  const rights = platform.brokerPermissions(prefixPattern);
  const entries = Object.entries(platform.BROKER_USERS).map(([who, user]) => ({ user, ...rights[who] }));
  return {
    users: [
      ...extraUsers,
      ...entries.map(({ user }) => ({
        name: user,
        password_hash: platform.rabbitPasswordHash(passwordOf(user)),
        hashing_algorithm: 'rabbit_password_hashing_sha256',
        tags: [],
      })),
    ],
    vhosts: [{ name: vhost }],
    permissions: [
      ...extraUsers.map((u) => ({ user: u.name, vhost, configure: '.*', write: '.*', read: '.*' })),
      ...entries.map(({ user, configure, write, read }) => ({ user, vhost, configure, write, read })),
    ],
  };
}

const vhostOf = (url) => decodeURIComponent(new URL(url).pathname.slice(1)) || '/';

if (process.argv.includes('--compose')) {
  // The management UI's login for people (as RABBITMQ_DEFAULT_USER was); no service uses it.
  const admin = {
    name: 'matching',
    password_hash: platform.rabbitPasswordHash('matching'),
    hashing_algorithm: 'rabbit_password_hashing_sha256',
    tags: ['administrator'],
  };
  process.stdout.write(`${JSON.stringify(definitions('/', platform.prefixPatternOf(''), COMPOSE_PASSWORD, [admin]), null, 2)}\n`);
} else if (process.argv.includes('--commands')) {
  const vhost = vhostOf(rabbitmqUrl);
  const rights = platform.brokerPermissions(platform.prefixPatternOf(process.env.AMQP_PREFIX ?? ''));
  for (const [who, user] of Object.entries(platform.BROKER_USERS)) {
    const { configure, write, read } = rights[who];
    console.log(`rabbitmqctl add_user ${user} '<password>'`);
    console.log(`rabbitmqctl set_permissions -p '${vhost}' ${user} '${configure}' '${write}' '${read}'`);
  }
} else {
  await ensureLocalUsers();
}

/** Creates or updates the users on this machine's broker, unless they are there already as wanted. */
async function ensureLocalUsers() {
  const host = new URL(rabbitmqUrl).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) {
    console.log(`broker users: RabbitMQ at ${host} is not this machine's; services use RABBITMQ_URL (or <SERVICE>_RABBITMQ_URL)`);
    return;
  }
  const vhost = vhostOf(rabbitmqUrl);
  const wanted = definitions(vhost, platform.ANY_PREFIX, platform.localBrokerPassword);
  const key = createHash('sha256')
    .update(JSON.stringify([wanted.permissions, Object.values(platform.BROKER_USERS).map(platform.localBrokerPassword)]))
    .digest('hex');
  const cacheFile = join(root, 'node_modules/.cache/pmatch-setup/broker-users');
  const cached = (() => {
    try {
      return readFileSync(cacheFile, 'utf8');
    } catch {
      return '';
    }
  })();
  if (cached === key && (await canLogIn(platform.BROKER_USERS.topology))) {
    console.log('broker users: up to date');
    return;
  }
  try {
    // On standard input: the broker's node reads a file path as its own user, not ours.
    execFileSync('rabbitmqctl', ['-q', 'import_definitions', '--format', 'json'], {
      input: JSON.stringify(wanted),
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 60_000,
    });
  } catch (error) {
    const reason = error.code === 'ENOENT' ? 'rabbitmqctl is not installed here' : String(error.stderr || error.message).trim();
    console.log(`broker users: not created (${reason}); services use RABBITMQ_URL`);
    return;
  }
  mkdirSync(dirname(cacheFile), { recursive: true });
  writeFileSync(cacheFile, key);
  console.log(`broker users: ${Object.values(platform.BROKER_USERS).join(', ')} on vhost ${vhost}`);
}

async function canLogIn(user) {
  try {
    const connection = await amqp.connect(platform.brokerUrlAs(rabbitmqUrl, user, platform.localBrokerPassword(user)));
    await connection.close();
    return true;
  } catch {
    return false;
  }
}
