export interface BatchWriterOptions {
  /** Awaited under load before the next write (see `BatchWriter`); `pauseFor(ms)` is the usual one. */
  gatherUnderLoad?: () => Promise<void>;
}

/** A pause of `ms` milliseconds, for `BatchWriterOptions.gatherUnderLoad`. */
export function pauseFor(ms: number): () => Promise<void> {
  return () => new Promise((resolve) => setTimeout(resolve, ms));
}

interface Waiting<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes items in batches, the way a database groups commits: an item submitted while no write
 * runs is written at once; items submitted during a write go together in the next (up to
 * `maxBatch`; with `gatherUnderLoad`, after that pause). `write` answers each item in order and
 * writes all of a batch or none; a failed batch of several is written again item by item, so one
 * bad item fails only itself (docs/decisions/0009-writes-grouped-like-commits.md).
 */
export class BatchWriter<I, O> {
  private readonly queue: Waiting<I, O>[] = [];
  private writing = false;

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly maxBatch: number,
    private readonly options: BatchWriterOptions = {},
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, not ${maxBatch}`);
  }

  submit(item: I): Promise<O> {
    return this.submitAll([item]).then(([result]) => result!);
  }

  /**
   * Items that arrived together (one message's), queued at once: they go in the same write (up to
   * `maxBatch`), where submitting them one by one would write the first alone. One result per
   * item, in the order given; rejects if any of them fails.
   */
  submitAll(items: readonly I[]): Promise<O[]> {
    return Promise.all(this.submitEach(items));
  }

  /** As `submitAll`, with each item's own result: one that fails does not hide the others' results. */
  submitEach(items: readonly I[]): Promise<O>[] {
    const results = items.map((item) => new Promise<O>((resolve, reject) => this.queue.push({ item, resolve, reject })));
    if (!this.writing) void this.drain();
    return results;
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await this.writeAll(batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (error) {
        if (batch.length === 1) batch[0]!.reject(error);
        else await Promise.all(batch.map((w) => this.writeAll([w.item]).then(([result]) => w.resolve(result!), w.reject)));
      }
      if (this.options.gatherUnderLoad !== undefined && this.queue.length > 0 && this.queue.length < this.maxBatch) await this.options.gatherUnderLoad();
    }
    this.writing = false;
  }

  private async writeAll(items: I[]): Promise<O[]> {
    const results = await this.write(items);
    if (results.length !== items.length) throw new Error(`a batch write answered ${results.length} results for ${items.length} items`);
    return results;
  }
}
