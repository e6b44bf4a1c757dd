import { bankForm, normaliseName } from '@pmatch/contracts';
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
    return pattern.test(depositor) || pattern.test(withoutDecoration(depositor));
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
    const parts = payerName.normalize('NFKC').trim().split(NAME_SEPARATOR).filter(Boolean);
    if (parts.length === 0) return null;
    const read = parts.map((part) => this.partPattern(part));
    // Family name first, as banks print it; a two-part name written given name first is read both ways.
    const orders = read.length === 2 ? [read, [read[1]!, read[0]!]] : [read];
    return new RegExp(`^(?:${orders.map((o) => o.join('')).join('|')})$`, 'u');
  }

  /** One part of a name: as written if kana, else its readings, whole or else as two dictionary entries; any reading if unknown. */
  private partPattern(part: string): string {
    const whole = this.readingsOf(part);
    if (whole.length > 0) return `(?:${whole.map(escape).join('|')})`;
    const alternatives = new Set<string>();
    const chars = [...part];
    for (let cut = 1; cut < chars.length; cut++) {
      const [head, tail] = [chars.slice(0, cut).join(''), chars.slice(cut).join('')];
      const heads = this.readingsOf(head);
      const tails = this.readingsOf(tail);
      if (heads.length > 0 && tails.length > 0) alternatives.add(`(?:${heads.map(escape).join('|')})(?:${tails.map(escape).join('|')})`);
    }
    return alternatives.size === 0 ? '(?:.+)' : `(?:${[...alternatives].join('|')})`;
  }

  private readingsOf(text: string): string[] {
    if (KANA_ONLY.test(text)) return [normaliseName(text)];
    return this.dictionary.readingsOf(text).map(normaliseName);
  }
}
