/**
 * Yen and Japan's time as every page of this service shows them, through `Intl` (the one source of
 * the Asia/Tokyo offset and of digit grouping).
 */

const YEN = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'JPY' });

const TOKYO_PARTS = new Intl.DateTimeFormat('en-US', {
  timeZone: 'Asia/Tokyo',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  weekday: 'short',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'longOffset',
});

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** Whole yen with separators: 12345 → ¥12,345 (amounts are integers everywhere). */
export function yen(amount: number | bigint): string {
  return YEN.format(amount);
}

/** A moment on a clock in Japan, by its parts; `weekday` 0 is Sunday, `offset` is `+09:00`. */
export interface TokyoClock {
  year: number;
  month: number;
  day: number;
  weekday: number;
  hour: number;
  minute: number;
  second: number;
  offset: string;
}

export function tokyoClockOf(at: Date | string): TokyoClock {
  const parts = Object.fromEntries(TOKYO_PARTS.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: WEEKDAYS.indexOf(parts.weekday!),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    offset: parts.timeZoneName === 'GMT' ? '+00:00' : parts.timeZoneName!.replace('GMT', ''),
  };
}

const pad = (n: number) => String(n).padStart(2, '0');
const dateOf = (c: TokyoClock) => `${c.year}-${pad(c.month)}-${pad(c.day)}`;

/** A moment in Japan, with the offset shown: 2026-11-27 09:05:03 +09:00. */
export function tokyoTime(at: Date | string): string {
  const c = tokyoClockOf(at);
  return `${dateOf(c)} ${pad(c.hour)}:${pad(c.minute)}:${pad(c.second)} ${c.offset}`;
}

/** The start of the day in Japan that `at` falls on, and of the next one. */
export function tokyoDay(at: Date): { start: Date; end: Date } {
  const c = tokyoClockOf(at);
  const start = new Date(`${dateOf(c)}T00:00:00${c.offset}`);
  return { start, end: new Date(start.getTime() + 24 * 60 * 60 * 1000) };
}

/** A date typed in a form (YYYY-MM-DD) as the start of that day in Japan; undefined when malformed. */
export function tokyoDateInput(value: string | undefined): Date | undefined {
  if (value === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const noon = new Date(`${value}T12:00:00Z`);
  if (Number.isNaN(noon.getTime())) return undefined;
  return new Date(`${value}T00:00:00${tokyoClockOf(noon).offset}`);
}
