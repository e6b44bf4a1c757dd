import Encoding from 'encoding-japanese';
import { abbreviateCorporateForms } from './corporate';
import { foldKana } from './normalise';

/** What a Zengin name field may hold: half-width kana (ｦ to ﾟ), A–Z, 0–9, space and ( ) . - / , */
const ZENGIN_NAME = /^[\uFF66-\uFF9F A-Z0-9().\-/,]*$/u;

/**
 * A name as a bank prints it in a transfer (Zengin): half-width katakana without small kana, the
 * long vowel as ｰ, upper-case Latin, one space between words, corporate forms abbreviated (ｶ)).
 * Undefined when the name holds a character no bank prints (kanji, ・).
 */
export function bankForm(name: string): string | undefined {
  const folded = abbreviateCorporateForms(
    foldKana(name)
      .replace(/[\s\u200B-\u200D\u2060]+/gu, ' ')
      .trim(),
  );
  const printed = Encoding.toHankakuCase(Encoding.toHankanaCase(folded));
  return ZENGIN_NAME.test(printed) ? printed : undefined;
}
