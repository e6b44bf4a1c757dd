import { createHash, randomBytes } from 'node:crypto';
import { EXCHANGES, QUEUES } from '@pmatch/contracts';

/**
 * One RabbitMQ user per process, each with only the configure, write and read rights its work
 * needs (docs/decisions/0087-one-broker-user-per-service.md). Only `topology` may declare
 * anything; the services check the topology passively and publish and consume within it.
 */
export const BROKER_USERS = {
  'orders-api': 'pmatch_orders_api',
  'bank-ingest': 'pmatch_bank_ingest',
  matcher: 'pmatch_matcher',
  'webhook-dispatcher': 'pmatch_webhook_dispatcher',
  ops: 'pmatch_ops',
  topology: 'pmatch_topology',
} as const;
export type BrokerUserOf = keyof typeof BROKER_USERS;

/** Regular expressions over resource names, as RabbitMQ matches them (`^$`: nothing). */
export interface BrokerPermission {
  configure: string;
  write: string;
  read: string;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const NOTHING = '^$';
/** Publishing to a queue by name (requests, and replies to a direct reply-to address). */
const DEFAULT_EXCHANGE = 'amq\\.default';
/** Consuming replies of one's own requests. */
const REPLY_TO = 'amq\\.rabbitmq\\.reply-to';

/**
 * Every user's rights, for names under `prefixPattern`: a regular expression matching the
 * deployment's AMQP_PREFIX (`prefixPatternOf(prefix)` for exactly one; this machine's users take
 * any, `ANY_PREFIX`, so that each test system's prefix is covered).
 */
export function brokerPermissions(prefixPattern: string): Record<BrokerUserOf, BrokerPermission> {
  const names = (...bases: string[]) => `${prefixPattern}(${bases.map(escape).join('|')})`;
  const only = (...alternatives: string[]) => `^(${alternatives.join('|')})$`;
  // The outbox is shared: any relay publishes any row, so every service with a relay writes both
  // topic exchanges; a consumer's checks against its rows are what hold there (decision 86).
  const relayAndReplies = only(names(EXCHANGES.bank, EXCHANGES.events), DEFAULT_EXCHANGE);
  const everything = [EXCHANGES.bank, EXCHANGES.events, EXCHANGES.deadLetter, ...Object.values(QUEUES).flatMap((q) => [q, `${q}.dead`])];
  return {
    'orders-api': { configure: NOTHING, write: relayAndReplies, read: only(REPLY_TO) },
    'bank-ingest': { configure: NOTHING, write: relayAndReplies, read: only(names(QUEUES.bankIngestCommands)) },
    matcher: { configure: NOTHING, write: relayAndReplies, read: only(names(QUEUES.matcherDeposits, QUEUES.matcherLateOrders, QUEUES.matcherCommands)) },
    // Its events' dead letters too: it removes those whose events it has taken in since.
    'webhook-dispatcher': {
      configure: NOTHING,
      write: NOTHING,
      read: only(names(QUEUES.dispatcherEvents, QUEUES.dispatcherRequests, `${QUEUES.dispatcherEvents}.dead`)),
    },
    // Requests to the matcher and their replies; `ops dlq` reads the dead-letter queues and
    // replays a letter by publishing it to its queue by name.
    ops: { configure: NOTHING, write: only(DEFAULT_EXCHANGE), read: only(REPLY_TO, names(...Object.values(QUEUES).map((q) => `${q}.dead`))) },
    // Declaring a queue with a dead-letter exchange takes write on the exchange and read on the
    // queue; binding takes write on the queue and read on the exchange.
    topology: { configure: only(names(...everything)), write: only(names(...everything)), read: only(names(...everything)) },
  };
}

/** Exactly this AMQP_PREFIX. */
export const prefixPatternOf = (prefix: string): string => escape(prefix);
/** Any AMQP_PREFIX (its characters, config.ts), for a machine where tests take a prefix each. */
export const ANY_PREFIX = '[a-z0-9_.-]*';

/** `url` with `user` and `password` as its credentials. */
export function brokerUrlAs(url: string, user: string, password: string): string {
  const withUser = new URL(url);
  withUser.username = encodeURIComponent(user);
  withUser.password = encodeURIComponent(password);
  return withUser.toString();
}

/**
 * The password of a user on a developer's own broker (setup.sh creates the users, the local start
 * and the test kit use them). Not a secret: such a broker is this machine's, like its guest user;
 * every other broker has passwords its operator chose.
 */
export const localBrokerPassword = (user: string): string => `${user}-local`;

/** RabbitMQ's stored form of a password (rabbit_password_hashing_sha256), for a definitions file. */
export function rabbitPasswordHash(password: string, salt: Buffer = randomBytes(4)): string {
  const digest = createHash('sha256')
    .update(Buffer.concat([salt, Buffer.from(password, 'utf8')]))
    .digest();
  return Buffer.concat([salt, digest]).toString('base64');
}
