import { readFileSync } from 'node:fs';

/** Time comes from here, never from `new Date()` in domain code, so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests set and advance by hand. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | string = new Date()) {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  set(to: Date | string): void {
    this.current = new Date(to).getTime();
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * System time plus an offset in milliseconds read from a file, so a test can move the time of
 * services running as separate processes (24 h reversal window, 14-day expiry) without sleeping.
 * The file is re-read on every call: it is tiny and this clock exists only under NODE_ENV=test.
 */
export class FileOffsetClock implements Clock {
  constructor(private readonly path: string) {}

  now(): Date {
    let offsetMs = 0;
    try {
      offsetMs = Number(readFileSync(this.path, 'utf8').trim()) || 0;
    } catch {
      // No file yet: no offset.
    }
    return new Date(Date.now() + offsetMs);
  }
}

/** The clock a service runs on: the system's, or under NODE_ENV=test a movable one if asked for. */
export function clockFromEnv(env: NodeJS.ProcessEnv = process.env): Clock {
  const file = env.TEST_CLOCK_FILE;
  if (file === undefined || file === '') return systemClock;
  if (env.NODE_ENV !== 'test') throw new Error('TEST_CLOCK_FILE is honoured only with NODE_ENV=test');
  return new FileOffsetClock(file);
}
