import type { Language } from './texts';

export { tokyoDateInput, tokyoDay, tokyoTime, yen } from '../intl';

/** A count with the language's digit grouping. */
export function numberText(n: number, language: Language): string {
  return n.toLocaleString(language === 'ja' ? 'ja-JP' : 'en-US');
}

/** Whole days from `from` to `now`, never below zero. */
export function daysBetween(from: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - from.getTime()) / 86_400_000));
}
