import type { Database, NewOrderAt, OrderRow } from '@pmatch/db';
import type { AddressPolicy, Clock, OutboxPublisher, SecretBox } from '@pmatch/platform';
import type { BankIngestClient } from '../outbound/bank-ingest-client';
import type { MatcherClient } from '../outbound/matcher-client';

/** What the use cases of orders-api work with; each takes the part it needs. */
export interface OrdersApiDeps {
  /** Plain SQL for creating and reading one order, the hot paths; Prisma (same pool) for the rest. */
  database: Database;
  clock: Clock;
  publicBaseUrl: string;
  /** Publishes what a commit wrote to the outbox. */
  outbox: OutboxPublisher;
  /** Writes a new order together with others asked for meanwhile (`newOrderWriter`). */
  writeNewOrder: (order: NewOrderAt) => Promise<OrderRow | null>;
  matcher: MatcherClient;
  bankIngest: BankIngestClient;
  /** Seals webhook signing secrets at rest. */
  secretBox: SecretBox;
  /** Which addresses a webhook URL may lead to. */
  addressPolicy: AddressPolicy;
  /** How long a dedicated account given to one order rests after the order closed before it is given again. */
  dedicatedAccountRestMs: number;
}
