import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { BROKER_USERS, brokerPermissionsFor } from './support/broker-users';
import { REPOSITORY } from './support/render';

/**
 * docker compose's RabbitMQ users (deploy/rabbitmq/definitions.json, loaded at boot): one per
 * process with exactly the rights packages/platform/src/broker-permissions.ts gives it, and each
 * compose service logging in as its own with the password the file's hash was made from.
 */

interface Definitions {
  users: { name: string; password_hash: string; hashing_algorithm: string; tags: string[] }[];
  permissions: { user: string; vhost: string; configure: string; write: string; read: string }[];
}

const definitions = JSON.parse(readFileSync(join(REPOSITORY, 'deploy', 'rabbitmq', 'definitions.json'), 'utf8')) as Definitions;
const compose = parse(readFileSync(join(REPOSITORY, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { environment?: Record<string, string> }>;
};

/** Whether `password` is the one RabbitMQ's sha256 hash was made from. */
function hashOf(password: string, stored: string): boolean {
  const bytes = Buffer.from(stored, 'base64');
  const salt = bytes.subarray(0, 4);
  return createHash('sha256')
    .update(Buffer.concat([salt, Buffer.from(password)]))
    .digest()
    .equals(bytes.subarray(4));
}

describe('deploy/rabbitmq/definitions.json', () => {
  test('when compose loads it, then every process has its user with exactly its rights (regenerate: node scripts/broker-users.mjs --compose)', () => {
    const wanted = brokerPermissionsFor('');
    for (const [who, user] of Object.entries(BROKER_USERS)) {
      expect(definitions.permissions.find((p) => p.user === user)).toEqual({ user, vhost: '/', ...wanted[who as keyof typeof wanted] });
      expect(definitions.users.find((u) => u.name === user)?.tags).toEqual([]);
    }
  });

  test("when a compose service starts, then its RABBITMQ_URL logs in as its own user, with the password the file's hash was made from", () => {
    const own: Record<string, string> = {
      'orders-api': BROKER_USERS['orders-api'],
      'bank-ingest': BROKER_USERS['bank-ingest'],
      matcher: BROKER_USERS.matcher,
      'webhook-dispatcher': BROKER_USERS['webhook-dispatcher'],
      ops: BROKER_USERS.ops,
      migrate: BROKER_USERS.topology,
    };
    for (const [service, user] of Object.entries(own)) {
      const url = new URL(compose.services[service]!.environment!.RABBITMQ_URL!);
      expect({ service, user: url.username }).toEqual({ service, user });
      const stored = definitions.users.find((u) => u.name === user)!;
      expect({ service, verifies: hashOf(decodeURIComponent(url.password), stored.password_hash) }).toEqual({ service, verifies: true });
    }
  });
});
