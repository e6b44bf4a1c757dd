import { DepositReceived, MatcherCommand, OrdersRegistered, QUEUES } from '@pmatch/contracts';
import { RedisLock, forgetProcessedMessages, runService, startService, systemClock, type Clock, type RunningService } from '@pmatch/platform';
import { commandHandler } from './amqp/commands';
import { depositHandler } from './amqp/deposits';
import { lateOrderHandler } from './amqp/late-orders';
import { loadConfig, type MatcherConfig } from './config';
import type { MatcherDeps } from './use-cases/deps';
import { COMMANDS_CONSUMER } from './use-cases/commands';
import { DEPOSITS_CONSUMER } from './use-cases/decide-deposit';
import { expireDueOrders } from './use-cases/expire-orders';
import { LATE_ORDERS_CONSUMER } from './use-cases/late-orders';
import { redeliverPendingDeposits } from './use-cases/redeliver-pending';
import { countWaitingDeposits } from './data/backlog';
import { loadNameDictionary } from './data/name-dictionary';
import { NameReadings } from './domain/names/readings';
import { createMatcherMetrics } from './use-cases/metrics';

export type Matcher = RunningService;

export async function start(config: MatcherConfig, clock: Clock = systemClock): Promise<Matcher> {
  return startService({ name: 'matcher', config, port: config.MATCHER_PORT, adminPort: config.MATCHER_ADMIN_PORT }, async (runtime) => {
    const { database, broker, logger } = runtime;
    const readings = new NameReadings(await loadNameDictionary());
    const relay = runtime.outboxRelay();
    const deps: MatcherDeps = {
      database,
      prisma: database.prisma,
      lock: new RedisLock(runtime.redis('required'), config.REDIS_PREFIX),
      clock,
      logger,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      lockTtlMs: config.LOCK_TTL_MS,
      lockWaitMs: config.LOCK_WAIT_MS,
      readings,
      metrics: createMatcherMetrics(runtime.metrics, () => countWaitingDeposits(database.prisma)),
    };
    const onRecorded = () => relay.nudge();
    const prefetch = config.MATCHER_PREFETCH;
    await runtime.consume(QUEUES.matcherDeposits, DepositReceived, depositHandler({ ...deps, broker, handOver: (messages) => relay.publishLeased(messages) }), {
      prefetch,
    });
    await runtime.consume(QUEUES.matcherLateOrders, OrdersRegistered, lateOrderHandler({ ...deps, onRecorded }), { prefetch });
    await runtime.consume(QUEUES.matcherCommands, MatcherCommand, commandHandler({ ...deps, broker, onRecorded }), { prefetch });

    runtime.every('expiry sweep', config.EXPIRY_SWEEP_INTERVAL_MS, async () => {
      const expired = await expireDueOrders(deps);
      if (expired > 0) relay.nudge();
      return expired;
    });
    runtime.every('pending deposit redelivery', config.PENDING_SWEEP_INTERVAL_MS, async () => {
      if ((await redeliverPendingDeposits(deps)) > 0) relay.nudge();
      // Never loop at once: what was asked for needs the grace period before it counts as stuck.
      return 0;
    });
    runtime.every('inbox retention', config.RETENTION_INTERVAL_MS, () =>
      forgetProcessedMessages(database.prisma, [DEPOSITS_CONSUMER, COMMANDS_CONSUMER, LATE_ORDERS_CONSUMER], clock.now()),
    );
    return {};
  });
}

if (require.main === module) runService('matcher', loadConfig, start);
