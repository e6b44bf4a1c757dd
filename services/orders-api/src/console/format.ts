import type { Language } from './texts';

export { tokyoDateInput, tokyoDay, tokyoTime, yen } from '../intl';

/** A count with the language's digit grouping. */
export function numberText(n: number, language: Language): string {
  return n.toLocaleString(language === 'ja' ? 'ja-JP' : 'en-US');
}
