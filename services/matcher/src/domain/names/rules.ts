import { corporateForms, isLongVowelVariant, normaliseName, sameCorporateTypes, type NameRule } from '@pmatch/contracts';

/**
 * The matching rules a seller can enable (docs/guide.md, "Matching rules"). Each includes
 * `kana_width`: a rule fits when the normalised names are equal, or equal after the rule's own change.
 */

/** Sender codes and customer numbers a bank or payer puts around the depositor name. */
const BRACKETED_DIGITS = /\(\d+\)/gu;
/** What may stand between フリコミ and the name; normalisation has removed spaces and turned - into ー. */
const FURIKOMI_SEPARATOR = '[ー./,:・_]';
const LEADING_DECORATION = new RegExp(`^(?:\\d+|(?:フリコミ|振込)${FURIKOMI_SEPARATOR}?)+`, 'u');
const TRAILING_DIGITS = /\d+$/u;

/** A name after a change, and whether it still ends where the bank's name ended. */
interface Changed {
  name: string;
  endKept: boolean;
}

/** Removes every match of `pattern`, saying whether one of them was the end of the name. */
function removing(pattern: RegExp, name: string): Changed {
  let endKept = true;
  const rest = name.replace(pattern, (match: string, ...args: unknown[]) => {
    // Without named groups the arguments end with the offset and the whole string.
    if ((args[args.length - 2] as number) + match.length === name.length) endKept = false;
    return '';
  });
  return { name: rest, endKept };
}

/**
 * A normalised depositor name without its decoration: bracketed digits anywhere, then leading digit
 * runs and フリコミ/振込 (in any order: `1234 ﾌﾘｺﾐ ﾔﾏﾀﾞ`), then trailing digits. Spaces after a sender
 * code are gone already (normalisation removes them).
 */
function undecorated(normalisedDepositor: string): Changed {
  const steps = [BRACKETED_DIGITS, LEADING_DECORATION, TRAILING_DIGITS];
  return steps.reduce<Changed>(
    (changed, pattern) => {
      const next = removing(pattern, changed.name);
      return { name: next.name, endKept: changed.endKept && next.endKept };
    },
    { name: normalisedDepositor, endKept: true },
  );
}

export function withoutDecoration(normalisedDepositor: string): string {
  return undecorated(normalisedDepositor).name;
}

/** Fewer compared characters say too little about who paid, even at a field's end. */
export const MIN_TRUNCATED_LENGTH = 6;

/**
 * Lengths, in half-width characters, at which banks cut a remitter name: the Zengin field of 48
 * (a sender code and its space count inside it), 37 and 26 (accounts that carry EDI data). A name
 * of any other length was not cut. Why: docs/decisions/0030-truncated-names-only-at-field-lengths.md.
 */
export const BANK_NAME_FIELD_LENGTHS: ReadonlySet<number> = new Set([26, 37, 48]);

/** Kana, their voicing marks and the prolonged sound mark, which a bank prints in half-width. */
// The combining voicing marks (U+3099–U+309C) stand alone in the class on purpose: a bank prints each as its own character.
// eslint-disable-next-line no-misleading-character-class
const KANA = /^[\u3041-\u3096\u3099-\u309C\u30A1-\u30FA\u30FC]$/u;

/**
 * How many characters a name takes in a bank's half-width form (ｶﾞ is two); undefined when it holds
 * a character no bank prints (kanji), so it cannot be a bank's cut.
 */
export function halfWidthLength(name: string): number | undefined {
  let length = 0;
  for (const ch of name.trim()) {
    const code = ch.codePointAt(0)!;
    const singleByte = (code >= 0x20 && code <= 0x7e) || (code >= 0xff61 && code <= 0xff9f);
    const foldsToSingleByte = (code >= 0xff01 && code <= 0xff5e) || code === 0x3000 || isLongVowelVariant(ch);
    if (singleByte || foldsToSingleByte) length += 1;
    else if (KANA.test(ch)) length += [...ch.normalize('NFD')].length;
    else return undefined;
  }
  return length;
}

/** A depositor name as compared: normalised, and whether the bank's field was full (its end may be a cut). */
export interface DepositorName {
  normalised: string;
  fillsBankField: boolean;
}

export function depositorName(name: string): DepositorName {
  const length = halfWidthLength(name);
  return { normalised: normaliseName(name), fillsBankField: length !== undefined && BANK_NAME_FIELD_LENGTHS.has(length) };
}

const VOICED_MARKS = new Set(['\u3099', '\u309A']);

/** ガ → カ, パ → ハ; undefined for a character without a (han)dakuten. */
function unvoiced(ch: string): string | undefined {
  const [base, mark, ...rest] = [...ch.normalize('NFD')];
  return mark !== undefined && VOICED_MARKS.has(mark) && rest.length === 0 ? base : undefined;
}

/**
 * Whether a normalised depositor name is what a bank left of the normalised payer name when it cut
 * the name at its field's end (`endsAtFieldCut`): at least 6 characters and a strict prefix, or a
 * prefix whose last kana lost its voicing mark (the cut fell between ｼ and ﾞ).
 */
export function isCutFrom(normalisedDepositor: string, normalisedPayer: string, endsAtFieldCut: boolean): boolean {
  const depositor = [...normalisedDepositor];
  const payer = [...normalisedPayer];
  if (!endsAtFieldCut || depositor.length < MIN_TRUNCATED_LENGTH || payer.length < depositor.length) return false;
  const last = depositor.length - 1;
  if (depositor.slice(0, last).some((ch, i) => ch !== payer[i])) return false;
  if (depositor[last] === payer[last]) return payer.length > depositor.length;
  return unvoiced(payer[last]!) === depositor[last];
}

/** The rules that change a name or the comparison; `kana_width` is the normalisation all include. */
export type NameChange = Exclude<NameRule, 'kana_width'>;

/**
 * Whether two normalised names fit after the given changes. The changes are made in the order a
 * depositor name is built, not in catalogue order: decoration comes off first so that a front
 * `ｶ)` behind a sender code (`1234 ｶ)ﾔﾏﾀﾞ`) becomes a front form, corporate forms next (two names
 * that both carry forms must carry the same types), and `truncated` only changes the comparison,
 * so its 6-character minimum counts what is compared. A name left empty (`ｶ)` alone, a depositor
 * name of digits only) never fits. No changes at all: the names are kana_width-equal.
 */
export function fitsAfter(changes: ReadonlySet<NameChange>, depositorName: DepositorName, normalisedPayer: string): boolean {
  let depositor: Changed = { name: depositorName.normalised, endKept: true };
  let payer = normalisedPayer;
  if (changes.has('decorated')) depositor = undecorated(depositor.name);
  if (changes.has('corporate_abbreviation')) {
    const depositorParts = corporateForms(depositor.name);
    const payerParts = corporateForms(payer);
    if (!sameCorporateTypes(depositorParts, payerParts)) return false;
    depositor = { name: depositorParts.rest, endKept: depositor.endKept && depositorParts.endKept };
    payer = payerParts.rest;
  }
  if (depositor.name === '' || payer === '') return false;
  return changes.has('truncated') ? isCutFrom(depositor.name, payer, depositorName.fillsBankField && depositor.endKept) : depositor.name === payer;
}

/** A name rule on its own: kana_width, or its own change after kana_width. */
export type NameRuleCheck = (depositorName: string, payerName: string) => boolean;

const NO_CHANGE: ReadonlySet<NameChange> = new Set();

const ruleOf =
  (...changes: NameChange[]): NameRuleCheck =>
  (depositor, payerName) => {
    const name = depositorName(depositor);
    const payer = normaliseName(payerName);
    return fitsAfter(NO_CHANGE, name, payer) || fitsAfter(new Set(changes), name, payer);
  };

// Named exactly as the catalogue (MATCHING_RULES) names them.
export const kana_width: NameRuleCheck = ruleOf();
export const corporate_abbreviation: NameRuleCheck = ruleOf('corporate_abbreviation');
export const decorated: NameRuleCheck = ruleOf('decorated');
export const truncated: NameRuleCheck = ruleOf('truncated');
