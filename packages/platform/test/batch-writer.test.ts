import { BatchWriter } from '../src';

/** A write whose batches the test sees and finishes by hand. */
function controlledWrite() {
  const batches: { items: string[]; finish: (results: string[]) => void; fail: (error: Error) => void }[] = [];
  const write = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ items, finish: resolve, fail: reject });
    });
  return { batches, write };
}

const upper = (items: string[]) => items.map((i) => i.toUpperCase());

describe('BatchWriter', () => {
  test('when nothing is being written, then an item is written at once, alone', async () => {
    const { batches, write } = controlledWrite();
    const writer = new BatchWriter(write, 10);
    const a = writer.submit('a');
    expect(batches.map((b) => b.items)).toEqual([['a']]);
    batches[0]!.finish(['A']);
    await expect(a).resolves.toBe('A');
  });

  test('when items arrive during a write, then they go together in the next write and each gets its own result', async () => {
    const { batches, write } = controlledWrite();
    const writer = new BatchWriter(write, 10);
    const a = writer.submit('a');
    const rest = ['b', 'c', 'd'].map((i) => writer.submit(i));
    expect(batches).toHaveLength(1);
    batches[0]!.finish(['A']);
    await a;
    expect(batches.map((b) => b.items)).toEqual([['a'], ['b', 'c', 'd']]);
    batches[1]!.finish(upper(batches[1]!.items));
    await expect(Promise.all(rest)).resolves.toEqual(['B', 'C', 'D']);
  });

  test('when items are submitted together while nothing is being written, then they go in one write and each gets its own result', async () => {
    const { batches, write } = controlledWrite();
    const writer = new BatchWriter(write, 2);
    const together = writer.submitAll(['a', 'b', 'c']);
    expect(batches.map((b) => b.items)).toEqual([['a', 'b']]);
    batches[0]!.finish(['A', 'B']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches.map((b) => b.items)).toEqual([['a', 'b'], ['c']]);
    batches[1]!.finish(['C']);
    await expect(together).resolves.toEqual(['A', 'B', 'C']);
  });

  test('when more items wait than a batch holds, then they are written maxBatch at a time in arrival order', async () => {
    const { batches, write } = controlledWrite();
    const writer = new BatchWriter(write, 2);
    const all = ['a', 'b', 'c', 'd', 'e'].map((i) => writer.submit(i));
    for (let written = 0; written < 3; written += 1) {
      const batch = batches[written]!;
      batch.finish(upper(batch.items));
      await all[written * 2];
    }
    expect(batches.map((b) => b.items)).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
    await expect(Promise.all(all)).resolves.toEqual(['A', 'B', 'C', 'D', 'E']);
  });

  test('when a write fails, then only its batch is rejected and the next batch is still written', async () => {
    const { batches, write } = controlledWrite();
    const writer = new BatchWriter(write, 10);
    const a = writer.submit('a');
    const b = writer.submit('b');
    batches[0]!.fail(new Error('connection lost'));
    await expect(a).rejects.toThrow('connection lost');
    batches[1]!.finish(['B']);
    await expect(b).resolves.toBe('B');
  });

  test('when a write of several items fails, then each is written again alone, and only the item that cannot be written is rejected', async () => {
    const written: string[][] = [];
    const writer = new BatchWriter(async (items: string[]) => {
      written.push(items);
      if (items.includes('bad')) throw new Error('violates a constraint');
      return upper(items);
    }, 10);
    const first = writer.submit('a');
    const rest = ['b', 'bad', 'c'].map((i) => writer.submit(i));

    await expect(first).resolves.toBe('A');
    const settled = await Promise.allSettled(rest);

    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual(['B', 'violates a constraint', 'C']);
    expect(written).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
  });

  test('when a write answers a different number of results than items, then its items are rejected rather than mis-assigned', async () => {
    const writer = new BatchWriter(async (items: string[]) => [...upper(items), 'one too many'], 10);
    const first = writer.submit('a');
    const second = writer.submit('b');
    const third = writer.submit('c');
    await expect(first).rejects.toThrow(/2 results for 1 items/);
    await expect(second).rejects.toThrow(/2 results for 1 items/);
    await expect(third).rejects.toThrow(/2 results for 1 items/);
  });

  describe('with gatherUnderLoad', () => {
    /** A pause the test ends by hand, counting how often the writer waited on it. */
    function controlledPause() {
      const pauses: (() => void)[] = [];
      return { pauses, gather: () => new Promise<void>((resolve) => pauses.push(resolve)) };
    }

    test('when nothing is being written, then an item is still written at once, without a pause', async () => {
      const { batches, write } = controlledWrite();
      const { pauses, gather } = controlledPause();
      const writer = new BatchWriter(write, 10, { gatherUnderLoad: gather });
      const a = writer.submit('a');
      expect(batches.map((b) => b.items)).toEqual([['a']]);
      batches[0]!.finish(['A']);
      await expect(a).resolves.toBe('A');
      expect(pauses).toHaveLength(0);
    });

    test('when a write ends with items waiting, then the next write waits for the pause and takes the items that came during it too', async () => {
      const { batches, write } = controlledWrite();
      const { pauses, gather } = controlledPause();
      const writer = new BatchWriter(write, 10, { gatherUnderLoad: gather });
      const a = writer.submit('a');
      const b = writer.submit('b');
      batches[0]!.finish(['A']);
      await a;
      await new Promise((resolve) => setImmediate(resolve));
      expect(pauses).toHaveLength(1);
      expect(batches).toHaveLength(1);

      const c = writer.submit('c');
      pauses[0]!();
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches.map((batch) => batch.items)).toEqual([['a'], ['b', 'c']]);
      batches[1]!.finish(['B', 'C']);
      await expect(Promise.all([b, c])).resolves.toEqual(['B', 'C']);
    });

    test('when a full batch is waiting after a write, then it is written without a pause', async () => {
      const { batches, write } = controlledWrite();
      const { pauses, gather } = controlledPause();
      const writer = new BatchWriter(write, 2, { gatherUnderLoad: gather });
      const a = writer.submit('a');
      const rest = writer.submitAll(['b', 'c']);
      batches[0]!.finish(['A']);
      await a;
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches.map((batch) => batch.items)).toEqual([['a'], ['b', 'c']]);
      expect(pauses).toHaveLength(0);
      batches[1]!.finish(['B', 'C']);
      await expect(rest).resolves.toEqual(['B', 'C']);
    });
  });

  test('when maxBatch is not a positive integer, then the writer is refused', () => {
    expect(() => new BatchWriter(async (items: string[]) => items, 0)).toThrow(RangeError);
  });
});
