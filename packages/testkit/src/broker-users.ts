import { BROKER_USERS, brokerUrlAs, localBrokerPassword, type BrokerUserOf } from '@pmatch/platform';
import amqp from 'amqplib';
import { RABBITMQ_URL } from './infra';

/**
 * The broker URL a process of the test kit connects with: `<NAME>_RABBITMQ_URL` when set, else
 * its own user on this machine's broker (created by scripts/setup.sh, scripts/broker-users.mjs),
 * else, on a broker without those users, the single RABBITMQ_URL.
 */
export async function brokerUrlFor(who: BrokerUserOf): Promise<string> {
  const own = process.env[`${who.toUpperCase().replace(/-/g, '_')}_RABBITMQ_URL`];
  if (own) return own;
  return (await localUsersExist()) ? localBrokerUrlFor(who) : RABBITMQ_URL;
}

/** Its own user on this machine's broker, whether or not that user exists. */
export function localBrokerUrlFor(who: BrokerUserOf): string {
  const user = BROKER_USERS[who];
  return brokerUrlAs(RABBITMQ_URL, user, localBrokerPassword(user));
}

let probed: Promise<boolean> | undefined;

/** Whether this broker has the per-service users (one login of the topology user, asked once per process). */
export function localUsersExist(): Promise<boolean> {
  probed ??= amqp.connect(localBrokerUrlFor('topology')).then(
    async (connection) => {
      await connection.close();
      return true;
    },
    () => false,
  );
  return probed;
}

/** For tests of the broker's permissions at the root, which depends on the test kit only. */
export { Broker, createLogger, type BrokerUserOf } from '@pmatch/platform';
