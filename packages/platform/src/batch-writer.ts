interface Waiting<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes items in batches without a timer, the way a database groups commits: an item submitted
 * while no write runs is written at once; items submitted while a write runs wait for it to end
 * and then go together in the next write. At low load every write is a batch of one with no added
 * wait; under load a batch holds what arrived during the write before it (up to `maxBatch`), so
 * the number of writes, not of items, is what grows slowly.
 *
 * `write` must answer each item in the order given (one result per item). If a write fails, every
 * item of that batch is rejected with its error and the writer goes on with the next batch.
 */
export class BatchWriter<I, O> {
  private readonly queue: Waiting<I, O>[] = [];
  private writing = false;

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly maxBatch: number,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, not ${maxBatch}`);
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const results = await this.write(batch.map((w) => w.item));
        if (results.length !== batch.length) throw new Error(`a batch write answered ${results.length} results for ${batch.length} items`);
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.writing = false;
  }
}
