import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId, type EventType, type Mode, type NewEvent, type Order } from '@pmatch/contracts';
import { createDatabase, recordEvents, type Database, type PrismaClient } from '@pmatch/db';
import { Broker, DeadLetters, ManualClock, OutboxRelay, SecretBox, createLogger, newSigningSecret } from '@pmatch/platform';
import { DATABASE_ROLE, RABBITMQ_URL, createTestDatabase, databaseUrlAs, uniqueName, waitFor, type TestDatabase } from '@pmatch/testkit';
import { loadConfig } from '../../src/config';
import { start, type Dispatcher, type DispatcherSeams } from '../../src/main';

export const SECRETS_KEY = 'dispatcher-test-secrets-key';
export const OWNER_EMAIL = 'owner@shop.example';

/**
 * The dispatcher in this test process, on a database and broker names of its own and on a
 * ManualClock, against the real PostgreSQL and RabbitMQ. It connects as its own least-privilege
 * role, as in production, so a statement that needs a grant the role lacks fails here; the test's
 * own reads and writes use the database owner. Events go in the way production's do: recorded
 * with their outbox rows, then published by the outbox relay.
 */
export class DispatcherHarness {
  readonly secretBox = new SecretBox(SECRETS_KEY);
  private readonly relay: OutboxRelay;

  readonly prisma: PrismaClient;

  private constructor(
    readonly dispatcher: Dispatcher,
    database: Database,
    readonly clock: ManualClock,
    private readonly broker: Broker,
    private readonly db: TestDatabase,
    private readonly prefix: string,
    /** Where e-mails go without SMTP_URL: a folder of this harness, removed at stop. */
    readonly mailDir: string,
  ) {
    this.prisma = database.prisma;
    this.relay = new OutboxRelay(database, broker, createLogger('test-relay', 'silent'), 60_000);
  }

  static async start(options: { env?: Record<string, string>; seams?: DispatcherSeams; clock?: ManualClock } = {}): Promise<DispatcherHarness> {
    const db = await createTestDatabase();
    const prefix = `${uniqueName('t')}.`;
    const clock = options.clock ?? new ManualClock();
    const mailDir = mkdtempSync(join(tmpdir(), 'dispatcher-mail-'));
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      DATABASE_URL: databaseUrlAs(db.url, DATABASE_ROLE['webhook-dispatcher']),
      DATABASE_POOL_SIZE: '5',
      RABBITMQ_URL,
      AMQP_PREFIX: prefix,
      SECRETS_KEY,
      WEBHOOK_DISPATCHER_PORT: '0',
      WEBHOOK_DISPATCHER_ADMIN_PORT: '0',
      DELIVERY_POLL_INTERVAL_MS: '50',
      EMAIL_POLL_INTERVAL_MS: '3600000',
      MAIL_DIR: mailDir,
      ...options.env,
    });
    const dispatcher = await start(config, clock, options.seams);
    const database = createDatabase(db.url, { poolSize: 3 });
    const broker = await Broker.connect(RABBITMQ_URL, prefix, createLogger('test-broker', 'silent'));
    return new DispatcherHarness(dispatcher, database, clock, broker, db, prefix, mailDir);
  }

  async stop(): Promise<void> {
    await this.dispatcher.stop();
    await this.broker.deleteTopology().catch(() => undefined);
    await this.broker.close();
    await this.prisma.$disconnect();
    await this.db.drop();
    rmSync(this.mailDir, { recursive: true, force: true });
  }

  async createOrganisation(): Promise<string> {
    const id = newId('organisation');
    await this.prisma.organisation.create({ data: { id, name: 'Shop', ownerEmail: OWNER_EMAIL } });
    return id;
  }

  /**
   * An endpoint row as orders-api writes it. Written directly, so tests can also store URLs that
   * registration refuses: what a host resolves to can change after it was registered.
   */
  async createEndpoint(organisationId: string, url: string, options: { mode?: Mode; enabledEvents?: EventType[] } = {}) {
    const secret = newSigningSecret();
    const id = newId('webhookEndpoint');
    const row = await this.prisma.webhookEndpoint.create({
      data: {
        id,
        organisationId,
        mode: options.mode ?? 'test',
        url,
        secretEncrypted: this.secretBox.seal(secret, { kind: 'webhook_endpoint', id }),
        enabledEvents: options.enabledEvents ?? [],
        createdAt: this.clock.now(),
      },
    });
    return { id: row.id, secret };
  }

  /**
   * Makes `secret` the endpoint's signing secret, with `replaced` secrets still signing until their
   * expiry, as orders-api's rotation leaves them.
   */
  async setSecrets(endpointId: string, secret: string, replaced: { secret: string; expiresAt: Date }[]): Promise<void> {
    await this.prisma.webhookEndpoint.update({
      where: { id: endpointId },
      data: {
        secretEncrypted: this.secretBox.seal(secret, { kind: 'webhook_endpoint', id: endpointId }),
        previousSecrets: replaced.map((r) => ({
          secret_encrypted: this.secretBox.seal(r.secret, { kind: 'webhook_endpoint', id: endpointId }),
          expires_at: r.expiresAt.toISOString(),
        })),
      },
    });
  }

  /** Records an event as a state change would and publishes it; resolves with its id. */
  async recordEvent(organisationId: string, type: EventType = 'order.paid', mode: Mode = 'test'): Promise<string> {
    const [id] = await this.recordEvents(organisationId, 1, type, mode);
    return id!;
  }

  /** Records `count` events in one DB transaction, as one decision does, and publishes their announcement. */
  async recordEvents(organisationId: string, count: number, type: EventType = 'order.paid', mode: Mode = 'test'): Promise<string[]> {
    const ids = await this.recordEventsUnpublished(organisationId, count, type, mode);
    await this.publishOutbox();
    return ids;
  }

  /** Records `count` events as `recordEvents` does, leaving their announcement in the outbox. */
  async recordEventsUnpublished(organisationId: string, count: number, type: EventType = 'order.paid', mode: Mode = 'test'): Promise<string[]> {
    const events = Array.from({ length: count }, () => ({ type, data: { object: sampleOrder(mode, this.clock.now()) } }) as NewEvent);
    return this.prisma.$transaction((tx) => recordEvents(tx, { organisationId, mode, bankAccountId: null, at: this.clock.now() }, events));
  }

  /** Publishes what the outbox holds, as the relay does. */
  async publishOutbox(): Promise<void> {
    await this.relay.publishBatch();
  }

  /**
   * Publishes the outbox message announcing an event once more, as the broker redelivers it: same
   * message id (the id of the first event it announces), same body.
   */
  async republishEvent(eventId: string): Promise<void> {
    const row = await this.prisma.outbox.findUniqueOrThrow({ where: { messageId: eventId } });
    await this.broker.publish(row.exchange, row.routingKey, row.payload, { messageId: row.messageId });
  }

  /** Puts a letter straight into `queue`'s dead-letter queue, as the broker does after the delivery limit. */
  async deadLetter(queue: string, body: unknown): Promise<void> {
    await this.broker.publish('', this.broker.name(`${queue}.dead`), body, { messageId: `dead-${Math.random().toString(36).slice(2)}` });
  }

  /** A counter or gauge of the dispatcher's /metrics, summed over its labels. */
  async metric(name: string): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${this.dispatcher.adminPort}/metrics`)).text();
    return text
      .split('\n')
      .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  }

  /** Waits until the dispatcher has taken in the event (its inbox row is written). */
  async waitForEventReceived(eventId: string): Promise<void> {
    await waitFor(
      async () => ((await this.prisma.inbox.count({ where: { consumer: 'webhook-dispatcher.events', messageId: eventId } })) > 0 ? true : undefined),
      { what: `the dispatcher to receive ${eventId}` },
    );
  }

  /** Messages waiting in a queue's dead-letter queue (`queue` without the prefix). */
  async deadLetters(queue: string): Promise<number> {
    return this.broker.messageCount(`${queue}.dead`);
  }

  /**
   * Moves every dead letter of `queue` back to it, each published before it is acknowledged, as
   * an operator's replay does: same message id, body and headers.
   */
  async replayDeadLetters(queue: string): Promise<number> {
    const deadLetters = await DeadLetters.connect(RABBITMQ_URL, this.prefix);
    try {
      const [result] = await deadLetters.replay({ queues: [queue] });
      return result!.replayed.length;
    } finally {
      await deadLetters.close();
    }
  }

  /**
   * Makes the database unreachable for the dispatcher (its role may no longer connect, and its
   * connections are ended), or reachable again. The test's own connections, as the owner, go on.
   */
  async setDispatcherDatabaseReachable(reachable: boolean): Promise<void> {
    const role = DATABASE_ROLE['webhook-dispatcher'];
    const verb = reachable ? 'GRANT CONNECT ON DATABASE %I TO PUBLIC, %I' : 'REVOKE CONNECT ON DATABASE %I FROM PUBLIC, %I';
    await this.prisma.$executeRawUnsafe(`DO $$ BEGIN EXECUTE format('${verb}', current_database(), '${role}'); END $$`);
    if (!reachable) {
      await this.prisma.$queryRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND usename = ${role}`;
    }
  }

  /** Publishes a request as orders-api does (resend, send test). */
  async publishRequest(body: unknown): Promise<void> {
    await this.broker.publish('events', 'webhook.requested', body, { messageId: uniqueName('whr_') });
  }

  async delivery(endpointId: string, eventId: string) {
    return this.prisma.webhookDelivery.findUnique({ where: { endpointId_eventId: { endpointId, eventId } } });
  }

  async attempts(endpointId: string, eventId: string) {
    const delivery = await this.delivery(endpointId, eventId);
    if (delivery === null) return [];
    return this.prisma.webhookDeliveryAttempt.findMany({ where: { deliveryId: delivery.id }, orderBy: { attempt: 'asc' } });
  }

  /** Waits until the event's delivery to the endpoint has made `count` attempts. */
  async waitForAttempts(endpointId: string, eventId: string, count: number) {
    return waitFor(
      async () => {
        const attempts = await this.attempts(endpointId, eventId);
        return attempts.length >= count ? attempts : undefined;
      },
      { what: `${count} attempt(s) of ${eventId} to ${endpointId}` },
    );
  }
}

/** An order object as events carry it (docs/guide.md "Orders"), for events recorded by hand. */
export function sampleOrder(mode: Mode, at: Date): Order {
  const iso = at.toISOString();
  return {
    id: newId('order'),
    object: 'order',
    livemode: mode === 'live',
    status: 'paid',
    amount: 12800,
    payer_name: 'ヤマダ タロウ',
    payer_name_bank_form: 'ﾔﾏﾀﾞ ﾀﾛｳ',
    payer_name_printable: true,
    external_id: uniqueName('ext-'),
    item_name: 'お米 5kg',
    bank_account_id: newId('bankAccount'),
    ordered_at: iso,
    expires_at: iso,
    closed_at: iso,
    metadata: {},
    payment_url: 'https://pay.example/pay/x',
    source: null,
    payment_link_id: null,
    transfer_code: null,
    dedicated_account: false,
    customer_reference: null,
    transfer_to: {
      bank_code: '9999',
      bank_name: 'テスト銀行',
      branch_code: '001',
      branch_name: 'テスト支店',
      account_type: 'ordinary',
      account_number: '1234567',
      holder_name: 'ｶ)ﾃｽﾄ',
    },
    payment: null,
    created_at: iso,
  };
}
