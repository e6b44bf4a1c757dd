/** Japan has had no daylight saving time since 1951: Tokyo is always UTC+09:00. */
const TOKYO_OFFSET_MS = 9 * 60 * 60 * 1000;

/**
 * The `occurred_at` of a transaction a statement gives only a day for: the last millisecond of
 * that day in Tokyo, or the moment the statement was received if that is earlier (nothing on it
 * can have happened later). An order's `ordered_at` is never after such a deposit's on the same
 * day before the upload, so the deposit is a candidate for it; an order of a later day never is
 * (docs/decisions/0036-statement-day-and-ordered-at.md).
 */
export function occurredAtOfDay(day: string, receivedAt: Date): Date {
  const endOfDay = Date.parse(`${day}T00:00:00.000Z`) - TOKYO_OFFSET_MS + 24 * 60 * 60 * 1000 - 1;
  return new Date(Math.min(endOfDay, receivedAt.getTime()));
}

/** The day (YYYY-MM-DD) in Tokyo of an instant. */
export function tokyoDay(at: Date): string {
  return new Date(at.getTime() + TOKYO_OFFSET_MS).toISOString().slice(0, 10);
}
