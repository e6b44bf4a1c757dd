import type { MatchingRule } from '@pmatch/contracts';
import { withoutCorporateForms } from './corporate';
import { normaliseName } from './normalise';

/**
 * The rules of DESIGN "Matching rules a seller can enable". Each includes `kana_width`: both names
 * are normalised first, then the rule's own change is made, then they are compared. A rule fits
 * when the changed names are equal (`truncated`: when the depositor name is a cut of the payer's).
 */

/** Sender codes and customer numbers a bank or payer puts around the depositor name. */
const BRACKETED_DIGITS = /\(\d+\)/gu;
/** What may stand between フリコミ and the name; normalisation has removed spaces and turned - into ー. */
const FURIKOMI_SEPARATOR = '[ー./,:・_]';
const LEADING_DECORATION = new RegExp(`^(?:\\d+|(?:フリコミ|振込)${FURIKOMI_SEPARATOR}?)+`, 'u');
const TRAILING_DIGITS = /\d+$/u;

/**
 * A normalised depositor name without its decoration: bracketed digits anywhere, then leading digit
 * runs and フリコミ/振込 (in any order: `1234 ﾌﾘｺﾐ ﾔﾏﾀﾞ`), then trailing digits. Spaces after a sender
 * code are gone already (normalisation removes them).
 */
export function withoutDecoration(normalisedDepositor: string): string {
  return normalisedDepositor.replace(BRACKETED_DIGITS, '').replace(LEADING_DECORATION, '').replace(TRAILING_DIGITS, '');
}

/** Shorter cuts say too little about who paid; DESIGN fixes the minimum at 6 characters. */
export const MIN_TRUNCATED_LENGTH = 6;

const VOICED_MARKS = new Set(['\u3099', '\u309A']);

/** ガ → カ, パ → ハ; undefined for a character without a (han)dakuten. */
function unvoiced(ch: string): string | undefined {
  const [base, mark, ...rest] = [...ch.normalize('NFD')];
  return mark !== undefined && VOICED_MARKS.has(mark) && rest.length === 0 ? base : undefined;
}

/**
 * Whether a normalised depositor name is what a bank leaves of the normalised payer name after
 * cutting it to its field length: at least 6 characters, and a strict prefix of the payer name.
 * Banks count half-width characters, in which a dakuten is a character of its own, so a cut can
 * fall between ｼ and ﾞ: a last character that is the payer's voiced character without its mark
 * (ｼ for ジ) is a cut too.
 */
export function isCutFrom(normalisedDepositor: string, normalisedPayer: string): boolean {
  const depositor = [...normalisedDepositor];
  const payer = [...normalisedPayer];
  if (depositor.length < MIN_TRUNCATED_LENGTH || payer.length < depositor.length) return false;
  const last = depositor.length - 1;
  if (depositor.slice(0, last).some((ch, i) => ch !== payer[i])) return false;
  if (depositor[last] === payer[last]) return payer.length > depositor.length;
  return unvoiced(payer[last]!) === depositor[last];
}

/** The rules that change a name or the comparison; `kana_width` is the normalisation all include. */
export type NameChange = Exclude<MatchingRule, 'kana_width'>;

/**
 * Whether two normalised names fit after the given changes. The changes are made in the order a
 * depositor name is built, not in catalogue order: decoration comes off first so that a front
 * `ｶ)` behind a sender code (`1234 ｶ)ﾔﾏﾀﾞ`) becomes a front form, corporate forms next, and
 * `truncated` only changes the comparison, so its 6-character minimum counts what is compared.
 * A name left empty (`ｶ)` alone, a depositor name of digits only) never fits.
 */
export function fitsAfter(changes: ReadonlySet<NameChange>, normalisedDepositor: string, normalisedPayer: string): boolean {
  let depositor = normalisedDepositor;
  let payer = normalisedPayer;
  if (changes.has('decorated')) depositor = withoutDecoration(depositor);
  if (changes.has('corporate_abbreviation')) {
    depositor = withoutCorporateForms(depositor);
    payer = withoutCorporateForms(payer);
  }
  if (depositor === '' || payer === '') return false;
  return changes.has('truncated') ? isCutFrom(depositor, payer) : depositor === payer;
}

/** A rule on its own: kana_width, then its own change. */
export type NameRule = (depositorName: string, payerName: string) => boolean;

const ruleOf =
  (...changes: NameChange[]): NameRule =>
  (depositorName, payerName) =>
    fitsAfter(new Set(changes), normaliseName(depositorName), normaliseName(payerName));

// Named exactly as the catalogue (MATCHING_RULES) names them.
export const kana_width: NameRule = ruleOf();
export const corporate_abbreviation: NameRule = ruleOf('corporate_abbreviation');
export const decorated: NameRule = ruleOf('decorated');
export const truncated: NameRule = ruleOf('truncated');
