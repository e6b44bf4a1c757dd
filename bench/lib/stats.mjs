/** Nearest-rank percentiles over a list of numbers (milliseconds here); undefined for an empty list. */
export function summarise(values) {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return { count: 0 };
  const at = (p) => sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))];
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: n,
    min: round(sorted[0]),
    p50: round(at(50)),
    p90: round(at(90)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(sorted[n - 1]),
    mean: round(sum / n),
  };
}

export function round(value, digits = 1) {
  if (value === undefined || value === null || !Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function ratePerSecond(count, startMs, endMs) {
  const seconds = (endMs - startMs) / 1000;
  return seconds > 0 ? round(count / seconds) : undefined;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it returns something other than undefined, at most until the deadline:
 * every wait in the bench is bounded.
 */
export async function waitUntil(probe, { timeoutMs, intervalMs = 200, what }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * Polls `progress` (a count that should rise to `target`) until it gets there. Gives up when it
 * has not risen for `stallMs`, or at `capMs` in all: a slow system gets time, a stuck one does not.
 */
export async function waitForProgress(progress, target, { stallMs = 60_000, capMs = 60 * 60_000, intervalMs = 500 } = {}) {
  const started = Date.now();
  let best = -1;
  let lastRise = started;
  for (;;) {
    const value = await progress();
    if (value >= target) return { reached: true, value };
    if (value > best) {
      best = value;
      lastRise = Date.now();
    }
    if (Date.now() - lastRise > stallMs || Date.now() - started > capMs) return { reached: false, value };
    await sleep(intervalMs);
  }
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at once; stops early past the deadline. */
export async function pool(count, concurrency, task, deadlineMs = Infinity) {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count && Date.now() < deadlineMs) {
      const i = next++;
      await task(i);
    }
  });
  await Promise.all(workers);
  return next;
}

/** A small deterministic PRNG (mulberry32) so a run's mix and order is the same every time. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle(array, random) {
  for (let i = array.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [array[i], array[j]] = [array[j], array[i]];
  }
  return array;
}
