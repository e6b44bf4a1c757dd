import { WEBHOOK_LIMITS } from '@pmatch/contracts';
import { describeStatus, failingTooLong, failureEmailAllowed, nextAttemptAt, SCHEDULED_ATTEMPTS } from '../src/domain/retries';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const at = new Date('2026-11-22T00:00:00Z');

describe('retry rules', () => {
  test('when attempts fail, then the waits are 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h, and there is no 9th attempt', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7].map((made) => nextAttemptAt(made, SCHEDULED_ATTEMPTS, at, 0)!.getTime() - at.getTime());

    expect(SCHEDULED_ATTEMPTS).toBe(8);
    expect(waits).toEqual([MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR]);
    expect(nextAttemptAt(8, SCHEDULED_ATTEMPTS, at, 0)).toBeNull();
  });

  test('when jitter is at its most, then a wait is stretched by 10% and never more', () => {
    expect(nextAttemptAt(1, 8, at, 1)!.getTime() - at.getTime()).toBe(66_000);
    expect(nextAttemptAt(1, 8, at, 7)!.getTime() - at.getTime()).toBe(66_000);
    expect(nextAttemptAt(1, 8, at, -1)!.getTime() - at.getTime()).toBe(60_000);
  });

  test('when a resend allows one attempt, then its failure ends the delivery', () => {
    expect(nextAttemptAt(1, 1, at, 0)).toBeNull();
  });

  test('when an endpoint has failed for just under and just over 72 hours, then only the latter switches it off', () => {
    expect(failingTooLong(at, new Date(at.getTime() + WEBHOOK_LIMITS.disableAfterFailingMs - 1))).toBe(false);
    expect(failingTooLong(at, new Date(at.getTime() + WEBHOOK_LIMITS.disableAfterFailingMs))).toBe(true);
  });

  test('when a failure e-mail went out less than 24 hours ago, then no other is sent', () => {
    expect(failureEmailAllowed(null, at)).toBe(true);
    expect(failureEmailAllowed(new Date(at.getTime() - 24 * HOUR + 1), at)).toBe(false);
    expect(failureEmailAllowed(new Date(at.getTime() - 24 * HOUR), at)).toBe(true);
  });

  test('when a receiver answers, then only 2xx counts, and a redirect is named as not followed', () => {
    expect([200, 204, 299].map(describeStatus)).toEqual([null, null, null]);
    expect(describeStatus(302)).toMatch(/redirect \(302\) not followed/);
    expect(describeStatus(500)).toBe('HTTP 500');
    expect(describeStatus(404)).toBe('HTTP 404');
  });
});
