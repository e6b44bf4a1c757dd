import { AddressPolicy, SecretBox, runService, startService, systemClock, type Clock, type RunningService, type ServiceRuntime } from '@pmatch/platform';
import { countDedicatedAccounts } from './data/dedicated-accounts';
import { registerDedicatedAccountGauges } from './use-cases/dedicated-account-metrics';
import { loadConfig, type OrdersApiConfig } from './config';
import { newOrderWriter } from './data/orders';
import { BankIngestClient } from './outbound/bank-ingest-client';
import { MatcherClient } from './outbound/matcher-client';
import { mountApi, mountReference } from './surfaces/api';
import { mountPaymentLinkPages, mountPaymentPages } from './surfaces/buyer-pages';
import { mountConsole } from './surfaces/console';
import { startSchedulers } from './surfaces/schedulers';
import type { OrdersApiDeps } from './use-cases/deps';

export type OrdersApi = RunningService;

/** orders-api: the buyer's pages, the seller console, the REST API and its sweeps, on one port. */
export async function start(config: OrdersApiConfig, clock: Clock = systemClock): Promise<OrdersApi> {
  return startService(
    { name: 'orders-api', config, port: config.ORDERS_API_PORT, adminPort: config.ORDERS_API_ADMIN_PORT, bodies: 'where mounted', readyWithoutBroker: true },
    (runtime) => {
      const deps = useCaseDeps(runtime, config, clock);
      // Per client address, in front of everything that answers without an API key: docs/decisions/0070-limits-before-authentication.md.
      const refusals = runtime.rateLimiter(config.REFUSAL_LIMIT_PER_SECOND, config.REFUSAL_LIMIT_BURST);
      mountPaymentPages(runtime, deps, refusals);
      mountConsole(runtime, deps, config);
      mountPaymentLinkPages(runtime, deps, config, refusals);
      mountReference(runtime, config);
      mountApi(runtime, deps, config, clock, refusals);
      startSchedulers(runtime, deps, config);
      registerDedicatedAccountGauges(runtime.metrics, () =>
        countDedicatedAccounts(runtime.database.prisma, new Date(clock.now().getTime() - config.DEDICATED_ACCOUNT_REST_MS)),
      );
      return {};
    },
  );
}

function useCaseDeps(runtime: ServiceRuntime, config: OrdersApiConfig, clock: Clock): OrdersApiDeps {
  const relay = runtime.outboxRelay();
  return {
    database: runtime.database,
    clock,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    outbox: relay,
    writeNewOrder: newOrderWriter(runtime.database.sql, config.PUBLIC_BASE_URL, (messages) => relay.publishLeased(messages), config.ORDER_WRITE_GATHER_MS),
    matcher: new MatcherClient(runtime.broker, config.COMMAND_TIMEOUT_MS),
    bankIngest: new BankIngestClient(runtime.broker, config.COMMAND_TIMEOUT_MS),
    secretBox: new SecretBox(config.SECRETS_KEY, config.SECRETS_KEYS_OLD),
    addressPolicy: new AddressPolicy(config.WEBHOOK_ALLOWED_CIDRS),
    dedicatedAccountRestMs: config.DEDICATED_ACCOUNT_REST_MS,
  };
}

if (require.main === module) runService('orders-api', loadConfig, start);
