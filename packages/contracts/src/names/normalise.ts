/**
 * The `kana_width` normalisation (docs/guide.md "Matching rules"): a Zengin depositor name
 * (half-width katakana, no small kana, upper-case Latin, any long-vowel mark) and a name a buyer
 * typed (full-width, hiragana, lower case, any dash) compare equal when they spell the same name.
 * By hand: no npm package does this; NFKC folds the width but not small kana, hiragana or dashes.
 */

/** Every long-vowel, hyphen and dash variant becomes this one character. */
export const LONG_VOWEL = 'ー';

/**
 * Characters that stand for a long vowel or a hyphen in names, as they are left by NFKC (so the
 * half-width ｰ, the full-width － and the small ﹣ are covered through ー and -). The wave dash and
 * tilde are included because buyers type ラ〜メン for ラーメン.
 */
const LONG_VOWEL_CLASS = '[\\u002D\\u007E\\u02D7\\u2010-\\u2015\\u2043\\u2212\\u2500\\u2501\\u2E3A\\u2E3B\\u301C\\u3030\\u30FC]';
const LONG_VOWEL_VARIANTS = new RegExp(LONG_VOWEL_CLASS, 'gu');
const ONE_LONG_VOWEL_VARIANT = new RegExp(`^${LONG_VOWEL_CLASS}$`, 'u');

/** Whether one character, as NFKC leaves it, stands for a long vowel or a hyphen. */
export const isLongVowelVariant = (ch: string): boolean => ONE_LONG_VOWEL_VARIANT.test(ch.normalize('NFKC'));

/**
 * Small kana and the large kana a Zengin notification carries instead (ｷﾕｳﾖ for キュウヨ). Hiragana
 * are turned into katakana first, so small hiragana arrive here as small katakana.
 */
const SMALL_TO_LARGE: Readonly<Record<string, string>> = {
  ァ: 'ア',
  ィ: 'イ',
  ゥ: 'ウ',
  ェ: 'エ',
  ォ: 'オ',
  ッ: 'ツ',
  ャ: 'ヤ',
  ュ: 'ユ',
  ョ: 'ヨ',
  ヮ: 'ワ',
  ヵ: 'カ',
  ヶ: 'ケ',
  // Katakana Phonetic Extensions (Ainu small kana).
  ㇰ: 'ク',
  ㇱ: 'シ',
  ㇲ: 'ス',
  ㇳ: 'ト',
  ㇴ: 'ヌ',
  ㇵ: 'ハ',
  ㇶ: 'ヒ',
  ㇷ: 'フ',
  ㇸ: 'ヘ',
  ㇹ: 'ホ',
  ㇺ: 'ム',
  ㇻ: 'ラ',
  ㇼ: 'リ',
  ㇽ: 'ル',
  ㇾ: 'レ',
  ㇿ: 'ロ',
};
const SMALL_KANA = new RegExp(`[${Object.keys(SMALL_TO_LARGE).join('')}]`, 'gu');

/** Hiragana ぁ…ゖ and the iteration marks ゝゞ; each sits 0x60 below its katakana. */
const HIRAGANA = /[\u3041-\u3096\u309D\u309E]/gu;
const HIRAGANA_TO_KATAKANA = 0x60;

/**
 * Whitespace of every kind (\s covers U+3000 and U+00A0) and the invisible characters that
 * copy-and-paste leaves in names (zero-width space, joiners, word joiner).
 */
const SPACE = /[\s\u200B-\u200D\u2060]/gu;

/** Only ASCII letters: Zengin carries A–Z, and NFKC has already folded full-width ａ to a. */
const LOWER_LATIN = /[a-z]/gu;

/** Full-width katakana without small kana, one long-vowel mark, upper-case Latin; spaces kept. */
export function foldKana(name: string): string {
  return name
    .normalize('NFKC')
    .replace(HIRAGANA, (ch) => String.fromCodePoint(ch.codePointAt(0)! + HIRAGANA_TO_KATAKANA))
    .replace(SMALL_KANA, (ch) => SMALL_TO_LARGE[ch]!)
    .replace(LONG_VOWEL_VARIANTS, LONG_VOWEL)
    .replace(LOWER_LATIN, (ch) => ch.toUpperCase());
}

/**
 * The `kana_width` form of a name: folded, without spaces. Idempotent: NFKC runs again at the end
 * because removing a space can put a base character next to a combining mark (カ ゙ → ガ).
 */
export function normaliseName(name: string): string {
  return foldKana(name).replace(SPACE, '').normalize('NFKC');
}
