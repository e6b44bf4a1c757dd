import { statement, type Database } from '@pmatch/db';
import type { Broker } from './broker';
import type { Logger } from './logger';

interface OutboxRow {
  id: bigint;
  message_id: string;
  exchange: string;
  routing_key: string;
  payload: unknown;
}

const BATCH_SIZE = 200;

/**
 * How long a claimed batch is another relay's to publish. Long enough for a batch and its confirms
 * on a slow broker; a batch that takes longer may be published twice, which consumers dedupe.
 */
export const OUTBOX_LEASE_MS = 15_000;

/**
 * Claims the oldest unpublished rows no live lease holds, in one autocommit statement. SKIP LOCKED
 * keeps two relays claiming at the same instant apart; the lease keeps them apart afterwards.
 * Parameter: the lease in milliseconds.
 */
const claimBatch = statement(
  'relay.claim_batch',
  `UPDATE outbox o SET leased_until = now() + $1 * interval '1 millisecond'
   FROM (SELECT id FROM outbox
         WHERE published_at IS NULL AND (leased_until IS NULL OR leased_until < now())
         ORDER BY id LIMIT ${BATCH_SIZE} FOR UPDATE SKIP LOCKED) claimed
   WHERE o.id = claimed.id
   RETURNING o.id, o.message_id, o.exchange, o.routing_key, o.payload`,
);
const markPublished = statement('relay.mark_published', 'UPDATE outbox SET published_at = now(), leased_until = NULL WHERE id = ANY($1::bigint[])');
const releaseLease = statement('relay.release_lease', 'UPDATE outbox SET leased_until = NULL WHERE id = ANY($1::bigint[]) AND published_at IS NULL');

/**
 * Publishes committed outbox rows. A batch is claimed with a lease (OUTBOX_LEASE_MS), published on
 * the confirm channel, and marked published only after the broker acked all of it; a relay that
 * dies in between leaves its lease to run out, and the rows are published again (consumers dedupe
 * by message id). No DB transaction stays open while the broker confirms, so publishing never
 * holds back the horizon of GET /v1/events. Several relays, in one service or many replicas, share
 * the work without publishing a row twice at once.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

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
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    if (this.running || this.stopped) return;
    let published = 0;
    this.running = (async () => {
      try {
        published = await this.publishBatch();
      } catch (error) {
        this.logger.error({ err: error }, 'outbox relay batch failed; will retry');
      }
    })();
    await this.running;
    this.running = undefined;
    const more = published === BATCH_SIZE || this.again;
    this.again = false;
    this.schedule(more ? 0 : this.pollIntervalMs);
  }

  /** Publishes one batch; resolves with how many rows it published. */
  async publishBatch(): Promise<number> {
    const { sql } = this.database;
    // UPDATE … RETURNING gives no order: publish in the order the rows were written.
    const rows = (await sql.rows<OutboxRow>(claimBatch, [OUTBOX_LEASE_MS])).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    try {
      await this.broker.publishBatch(rows.map((r) => ({ exchange: r.exchange, routingKey: r.routing_key, body: r.payload, messageId: r.message_id })));
    } catch (error) {
      // Unconfirmed: hand the rows back at once rather than after the lease (best effort; the lease is the fallback).
      await sql.count(releaseLease, [ids]).catch(() => undefined);
      throw error;
    }
    await sql.count(markPublished, [ids]);
    return rows.length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
