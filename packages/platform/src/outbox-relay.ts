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

const claimBatch = statement(
  'relay.claim_batch',
  `SELECT id, message_id, exchange, routing_key, payload FROM outbox
   WHERE published_at IS NULL ORDER BY id LIMIT ${BATCH_SIZE} FOR UPDATE SKIP LOCKED`,
);
const markPublished = statement('relay.mark_published', 'UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])');

/**
 * Publishes committed outbox rows. Rows are claimed with FOR UPDATE SKIP LOCKED inside a DB
 * transaction, published on the confirm channel, and marked published only after the broker acked
 * all of them; a crash in between republishes (consumers dedupe by message id). Several relays,
 * in one service or many replicas, share the work without publishing a row twice at once.
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
    return this.database.transaction(async (tx) => {
      const rows = await tx.rows<OutboxRow>(claimBatch);
      if (rows.length === 0) return 0;
      await this.broker.publishBatch(rows.map((r) => ({ exchange: r.exchange, routingKey: r.routing_key, body: r.payload, messageId: r.message_id })));
      await tx.count(markPublished, [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
