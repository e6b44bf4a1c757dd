import type { Language } from './texts';

/** Japan has kept UTC+9 all year since 1951, so a fixed offset is Asia/Tokyo time. */
const TOKYO_OFFSET_MS = 9 * 60 * 60 * 1000;

/** Whole yen with separators: 12345 → ¥12,345 (amounts are integers everywhere). */
export function yen(amount: number | bigint): string {
  const digits = BigInt(amount);
  const sign = digits < 0n ? '-' : '';
  return `${sign}¥${(digits < 0n ? -digits : digits).toString().replace(/\B(?=(\d{3})+$)/g, ',')}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A moment in Japan, with the offset shown: 2026-11-27 09:05:03 +09:00. */
export function tokyoTime(at: Date | string): string {
  const shifted = new Date(new Date(at).getTime() + TOKYO_OFFSET_MS);
  return `${shifted.getUTCFullYear()}-${pad(shifted.getUTCMonth() + 1)}-${pad(shifted.getUTCDate())} ${pad(shifted.getUTCHours())}:${pad(shifted.getUTCMinutes())}:${pad(shifted.getUTCSeconds())} +09:00`;
}

/** The start of the day in Japan that `at` falls on, and of the next one. */
export function tokyoDay(at: Date): { start: Date; end: Date } {
  const shifted = at.getTime() + TOKYO_OFFSET_MS;
  const startShifted = shifted - (shifted % (24 * 60 * 60 * 1000));
  const start = new Date(startShifted - TOKYO_OFFSET_MS);
  return { start, end: new Date(start.getTime() + 24 * 60 * 60 * 1000) };
}

/** A date typed in a form (YYYY-MM-DD) as the start of that day in Japan; undefined when malformed. */
export function tokyoDateInput(value: string | undefined): Date | undefined {
  if (value === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const at = new Date(`${value}T00:00:00+09:00`);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

export function numberText(n: number, language: Language): string {
  return n.toLocaleString(language === 'ja' ? 'ja-JP' : 'en-US');
}
