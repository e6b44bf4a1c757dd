import { bankForm, normaliseName, withoutCorporateForms } from '@pmatch/contracts';
import { withoutDecoration } from './rules';

/** The readings in kana a name dictionary lists for a name written in kanji (`data/name-dictionary.ts`). */
export interface ReadingDictionary {
  readingsOf(kanji: string): readonly string[];
}

/** Spaces and the middle dot that separate a family name from a given name. */
const NAME_SEPARATOR = /[\s\u3000\u30FB\uFF65]+/u;
/** Kana (either script), their marks and the long-vowel mark: read as written. */
// The combining voicing marks (U+3099, U+309A) stand in the class on purpose: a name may hold them alone.
// eslint-disable-next-line no-misleading-character-class
const KANA_ONLY = /^[\u3041-\u3096\u3099-\u309F\u30A1-\u30FF\uFF66-\uFF9F]+$/u;
/** Payer names remembered with their compiled readings. */
const CACHE_SIZE = 10_000;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const alternation = (readings: readonly string[]): string => `(?:${readings.map(escape).join('|')})`;
/** A part of a name the dictionary cannot read: any reading of one character or more. */
const ANY = '(?:.+)';

/**
 * Whether a depositor name (as a bank prints it) could be a reading of a payer name written in
 * kanji, which no matching rule can compare: then the order is a rival that makes the deposit
 * ambiguous, never one to confirm (docs/decisions/0096-kanji-names-as-rivals.md). Each part of the
 * name (family, given) is read by the dictionary, whole or as two entries; a part it does not
 * know may be read any way, so an unknown name is a rival rather than a stranger.
 */
export class NameReadings {
  private readonly compiled = new Map<string, RegExp | null>();

  constructor(private readonly dictionary: ReadingDictionary) {}

  couldRead(depositorName: string, payerName: string): boolean {
    const pattern = this.patternOf(payerName);
    if (pattern === null) return false;
    const depositor = normaliseName(depositorName);
    const bare = withoutCorporateForms(withoutDecoration(depositor));
    return pattern.test(depositor) || pattern.test(bare);
  }

  /** The readings of a payer name as one pattern over kana_width forms; null for a name the rules can compare. */
  private patternOf(payerName: string): RegExp | null {
    const known = this.compiled.get(payerName);
    if (known !== undefined) return known;
    const pattern = this.compile(payerName);
    if (this.compiled.size >= CACHE_SIZE) this.compiled.delete(this.compiled.keys().next().value!);
    this.compiled.set(payerName, pattern);
    return pattern;
  }

  private compile(payerName: string): RegExp | null {
    if (bankForm(payerName) !== undefined) return null;
    // A company is read without its form ((株), 株式会社): the depositor's ｶ) is set aside likewise.
    const parts = withoutCorporateForms(payerName.normalize('NFKC').trim()).split(NAME_SEPARATOR).filter(Boolean);
    if (parts.length === 0) return null;
    const read = parts.map((part) => this.partPattern(part));
    // Family name first, as banks print it; a two-part name written given name first is read both ways.
    const orders = read.length === 2 ? [read, [read[1]!, read[0]!]] : [read];
    return new RegExp(`^(?:${orders.map((o) => o.join('')).join('|')})$`, 'u');
  }

  /**
   * One part of a name: its readings whole; else cut in two, each side by its readings (a side the
   * dictionary does not know read any way, so 山田商事 reads ヤマダ and anything after); any
   * reading when no side of any cut is known.
   */
  private partPattern(part: string): string {
    const whole = this.readingsOf(part);
    if (whole.length > 0) return alternation(whole);
    const bothKnown = new Set<string>();
    const oneKnown = new Set<string>();
    const chars = [...part];
    for (let cut = 1; cut < chars.length; cut++) {
      const heads = this.readingsOf(chars.slice(0, cut).join(''));
      const tails = this.readingsOf(chars.slice(cut).join(''));
      if (heads.length > 0 && tails.length > 0) bothKnown.add(`${alternation(heads)}${alternation(tails)}`);
      else if (heads.length > 0 || tails.length > 0)
        oneKnown.add(`${heads.length > 0 ? alternation(heads) : ANY}${tails.length > 0 ? alternation(tails) : ANY}`);
    }
    const read = bothKnown.size > 0 ? bothKnown : oneKnown;
    return read.size === 0 ? ANY : `(?:${[...read].join('|')})`;
  }

  private readingsOf(text: string): string[] {
    if (KANA_ONLY.test(text)) return [normaliseName(text)];
    return this.dictionary.readingsOf(text).map(normaliseName);
  }
}
