import { OUTBOX_LEASE_MS, sql, preparedQuery, type Database, type LeasedMessage } from '@pmatch/db';
import { performance } from 'node:perf_hooks';
import type { Broker } from './broker';
import type { Logger } from './logger';

interface OutboxRow {
  id: bigint;
  message_id: string;
  exchange: string;
  routing_key: string;
  payload: object;
  headers: { traceparent?: unknown } | null;
}

const BATCH_SIZE = 200;

/**
 * At most this many handed-over messages wait in memory; more are left to their lease, and claimed
 * when it runs out. A broker that blocks publishers (a memory or disk alarm) holds the pass that
 * publishes, and hand-overs would otherwise pile up in memory for as long as it lasts.
 */
export const HANDED_OVER_LIMIT = 10 * BATCH_SIZE;

/**
 * Claims the oldest unpublished rows no live lease holds, in one autocommit statement. SKIP LOCKED
 * keeps two relays claiming at the same instant apart; the lease keeps them apart afterwards.
 */
const claimBatch = preparedQuery<{ leaseMs: number }, OutboxRow>(
  'relay.claim_batch',
  (p) => sql`UPDATE outbox o SET leased_until = now() + ${p.leaseMs} * interval '1 millisecond'
   FROM (SELECT id FROM outbox
         WHERE published_at IS NULL AND (leased_until IS NULL OR leased_until < now())
         ORDER BY id LIMIT ${BATCH_SIZE} FOR UPDATE SKIP LOCKED) claimed
   WHERE o.id = claimed.id
   RETURNING o.id, o.message_id, o.exchange, o.routing_key, o.payload, o.headers`,
);
/** By message id, the key both a claimed row and a handed-over one come with. */
const markPublished = preparedQuery<{ messageIds: string[] }>(
  'relay.mark_published',
  (p) => sql`UPDATE outbox SET published_at = now(), leased_until = NULL WHERE message_id = ANY(${p.messageIds}::text[])`,
);
/**
 * Gives unconfirmed rows back to the next claim. Rows marked published meanwhile have no lease
 * left, so "still leased" is the only condition: "unpublished" would let PostgreSQL find the rows
 * by walking outbox_unpublished_idx, and on statistics gathered while the outbox was near empty it
 * did, reading the whole backlog that a broker failing to confirm leaves behind.
 */
export const releaseLease = preparedQuery<{ messageIds: string[] }>(
  'relay.release_lease',
  (p) => sql`UPDATE outbox SET leased_until = NULL WHERE message_id = ANY(${p.messageIds}::text[]) AND leased_until IS NOT NULL`,
);

/** What a writer tells its outbox relay after a commit that wrote outbox rows. */
export interface OutboxPublisher {
  /** Rows were written unleased: claim them. */
  nudge(): void;
  /** Rows were inserted leased: publish these. */
  publishLeased(messages: LeasedMessage[]): void;
}

/**
 * Publishes committed outbox rows at least once: rows handed over by their writer (`publishLeased`)
 * first, then rows it claims with a lease (after a `nudge`, and every poll interval), each batch
 * marked published once the broker confirmed all of it. A relay that dies leaves its lease to run
 * out, and the rows are published again; consumers dedupe by message id.
 */
export class OutboxRelay implements OutboxPublisher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Rows their writers inserted leased and handed over, in the order handed over. */
  private readonly handedOver: LeasedMessage[] = [];
  /** A claim was asked for (`nudge`, or a full batch that may have more behind it). */
  private claimAsked = true;
  /** When the last claim began (performance.now()): the poll claims at least every interval. */
  private lastClaimAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly database: Database,
    private readonly broker: Broker,
    private readonly logger: Logger,
    private readonly pollIntervalMs: number,
  ) {}

  start(): void {
    this.schedule(0);
  }

  /** Called after a local commit that wrote outbox rows, to publish without waiting for the poll. */
  nudge(): void {
    if (this.stopped) return;
    this.claimAsked = true;
    this.wake();
  }

  /**
   * Publishes rows a statement inserted leased (`outboxInsert`'s `leased`), which must have
   * committed. After `stop`, or beyond HANDED_OVER_LIMIT waiting, they are left to their lease,
   * and a relay claims them when it runs out.
   */
  publishLeased(messages: LeasedMessage[]): void {
    if (this.stopped || messages.length === 0) return;
    this.handedOver.push(...messages.slice(0, HANDED_OVER_LIMIT - this.handedOver.length));
    this.wake();
  }

  private wake(): void {
    // A pass that runs schedules the next itself, and sees what was asked meanwhile.
    if (this.running === undefined) this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private untilPoll(): number {
    return Math.max(0, this.lastClaimAt + this.pollIntervalMs - performance.now());
  }

  private async tick(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = this.pass();
    await this.running;
    this.running = undefined;
    this.schedule(this.handedOver.length > 0 || this.claimAsked ? 0 : this.untilPoll());
  }

  /** Publishes a batch of what was handed over, then claims one if asked to or the poll is due. */
  private async pass(): Promise<void> {
    if (this.handedOver.length > 0) await this.publishHandedOver();
    if (!this.claimAsked && this.untilPoll() > 0) return;
    this.claimAsked = false;
    this.lastClaimAt = performance.now();
    // While the broker reconnects, claiming would only lease rows to hand them straight back: the
    // next poll tries again.
    if (!this.broker.connected) return;
    try {
      if ((await this.publishBatch()) === BATCH_SIZE) this.claimAsked = true;
    } catch (error) {
      this.logger.error({ err: error }, 'outbox relay batch failed; will retry');
    }
  }

  /** Claims and publishes one batch; resolves with how many rows it published. */
  async publishBatch(): Promise<number> {
    // UPDATE … RETURNING gives no order: publish in the order the rows were written.
    const rows = (await this.database.sql.rows(claimBatch, { leaseMs: OUTBOX_LEASE_MS })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (rows.length === 0) return 0;
    await this.publish(
      rows.map((r) => ({
        exchange: r.exchange,
        routingKey: r.routing_key,
        payload: r.payload,
        messageId: r.message_id,
        ...(typeof r.headers?.traceparent === 'string' ? { traceparent: r.headers.traceparent } : {}),
      })),
    );
    return rows.length;
  }

  /** Publishes the next batch of what was handed over; rows it cannot publish are left to be claimed. */
  private async publishHandedOver(): Promise<void> {
    const batch = this.handedOver.splice(0, BATCH_SIZE);
    if (!this.broker.connected) {
      // The broker reconnects: hand the rows back at once, for the poll to claim once it is back.
      await this.database.sql.count(releaseLease, { messageIds: batch.map((m) => m.messageId) }).catch(() => undefined);
      return;
    }
    await this.publish(batch).catch((error: unknown) => {
      this.logger.error({ err: error }, 'outbox relay could not publish rows handed over; they are claimed again');
    });
  }

  /** Publishes leased rows and marks them published once the broker confirmed them all. */
  private async publish(messages: LeasedMessage[]): Promise<void> {
    const messageIds = messages.map((m) => m.messageId);
    try {
      await this.broker.publishBatch(
        messages.map((m) => ({
          exchange: m.exchange,
          routingKey: m.routingKey,
          body: m.payload,
          messageId: m.messageId,
          ...(m.traceparent === undefined ? {} : { traceparent: m.traceparent }),
        })),
      );
    } catch (error) {
      // Unconfirmed: hand the rows back at once rather than after the lease (best effort; the lease is the fallback).
      await this.database.sql.count(releaseLease, { messageIds }).catch(() => undefined);
      throw error;
    }
    const marked = await this.database.sql.count(markPublished, { messageIds });
    // A writer that handed over a message it did not insert: published for nothing, found here.
    if (marked !== messages.length) this.logger.warn({ published: messages.length, marked }, 'outbox relay published messages that have no outbox row');
  }

  /**
   * Finishes the pass that runs and publishes what was handed over before (each confirmed and
   * marked, or left to its lease if the broker fails), then claims nothing more.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    while (this.handedOver.length > 0) await this.publishHandedOver();
  }
}
