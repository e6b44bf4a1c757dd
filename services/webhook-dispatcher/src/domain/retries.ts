import { WEBHOOK_LIMITS } from '@pmatch/contracts';

const WAITS = WEBHOOK_LIMITS.retryWaitsMs;

/** Attempts an automatic delivery makes: the length of the retry table (docs/guide.md "Webhooks"). */
export const SCHEDULED_ATTEMPTS = WAITS.length;

/**
 * When the next attempt is due after `attemptsMade` failed ones, or null when the delivery has no
 * attempt left. The wait before attempt n+1 is the table's, stretched by `jitter` (0…1) times at
 * most 10%, so that many deliveries failing together do not all come back in the same second.
 */
export function nextAttemptAt(attemptsMade: number, maxAttempts: number, failedAt: Date, jitter: number): Date | null {
  if (attemptsMade >= maxAttempts) return null;
  const wait = WAITS[Math.min(attemptsMade, WAITS.length - 1)]!;
  const stretch = 1 + Math.min(Math.max(jitter, 0), 1) * WEBHOOK_LIMITS.retryJitterMax;
  return new Date(failedAt.getTime() + Math.round(wait * stretch));
}

/** An endpoint that has only failed for 72 hours is switched off. */
export function failingTooLong(failingSince: Date, at: Date): boolean {
  return at.getTime() - failingSince.getTime() >= WEBHOOK_LIMITS.disableAfterFailingMs;
}

/** At most one failed-delivery e-mail per endpoint per 24 hours. */
export function failureEmailAllowed(lastSentAt: Date | null, at: Date): boolean {
  return lastSentAt === null || at.getTime() - lastSentAt.getTime() >= WEBHOOK_LIMITS.failureEmailIntervalMs;
}

/** Receivers acknowledge with 2xx; a 3xx is a failure because redirects are never followed. */
export function isAcknowledged(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300;
}

/** What an attempt's status code means, for the delivery log. */
export function describeStatus(statusCode: number): string | null {
  if (isAcknowledged(statusCode)) return null;
  if (statusCode >= 300 && statusCode < 400) return `redirect (${statusCode}) not followed; answer 2xx at the registered URL`;
  return `HTTP ${statusCode}`;
}
