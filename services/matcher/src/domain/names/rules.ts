import type { MatchingRule } from '@pmatch/contracts';
import { corporateForms, sameCorporateTypes } from './corporate';
import { normaliseName } from './normalise';

/**
 * The rules of DESIGN "Matching rules a seller can enable". Each includes `kana_width`: both names
 * are normalised first; a rule fits when the normalised names are equal, or when they are after
 * the rule's own change (`truncated`: when the depositor name is a cut of the payer's). So a seller
 * who enabled only `truncated` sees ﾔﾏﾀﾞﾀﾛｳ fit ヤマダタロウ as well as ヤマダタロウジ, and the
 * two orders tie instead of the longer name winning.
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
  return steps.reduce<Changed>((changed, pattern) => {
    const next = removing(pattern, changed.name);
    return { name: next.name, endKept: changed.endKept && next.endKept };
  }, { name: normalisedDepositor, endKept: true });
}

export function withoutDecoration(normalisedDepositor: string): string {
  return undecorated(normalisedDepositor).name;
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
 * (ｼ for ジ) is a cut too — but only where the bank's name ended (`lastIsBankEnd`). Where
 * decoration or a corporate form followed (`ﾔﾏﾀﾞｼﾖｳｼ 1234`, `ﾔﾏﾀﾞｼﾖｳｼ(ｶ`) no cut fell, and a
 * missing mark is another name.
 */
export function isCutFrom(normalisedDepositor: string, normalisedPayer: string, lastIsBankEnd = true): boolean {
  const depositor = [...normalisedDepositor];
  const payer = [...normalisedPayer];
  if (depositor.length < MIN_TRUNCATED_LENGTH || payer.length < depositor.length) return false;
  const last = depositor.length - 1;
  if (depositor.slice(0, last).some((ch, i) => ch !== payer[i])) return false;
  if (depositor[last] === payer[last]) return payer.length > depositor.length;
  return lastIsBankEnd && unvoiced(payer[last]!) === depositor[last];
}

/** The rules that change a name or the comparison; `kana_width` is the normalisation all include. */
export type NameChange = Exclude<MatchingRule, 'kana_width'>;

/**
 * Whether two normalised names fit after the given changes. The changes are made in the order a
 * depositor name is built, not in catalogue order: decoration comes off first so that a front
 * `ｶ)` behind a sender code (`1234 ｶ)ﾔﾏﾀﾞ`) becomes a front form, corporate forms next (two names
 * that both carry forms must carry the same types), and `truncated` only changes the comparison,
 * so its 6-character minimum counts what is compared. A name left empty (`ｶ)` alone, a depositor
 * name of digits only) never fits. No changes at all: the names are kana_width-equal.
 */
export function fitsAfter(changes: ReadonlySet<NameChange>, normalisedDepositor: string, normalisedPayer: string): boolean {
  let depositor: Changed = { name: normalisedDepositor, endKept: true };
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
  return changes.has('truncated') ? isCutFrom(depositor.name, payer, depositor.endKept) : depositor.name === payer;
}

/** A rule on its own: kana_width, or its own change after kana_width. */
export type NameRule = (depositorName: string, payerName: string) => boolean;

const NO_CHANGE: ReadonlySet<NameChange> = new Set();

const ruleOf =
  (...changes: NameChange[]): NameRule =>
  (depositorName, payerName) => {
    const depositor = normaliseName(depositorName);
    const payer = normaliseName(payerName);
    return fitsAfter(NO_CHANGE, depositor, payer) || fitsAfter(new Set(changes), depositor, payer);
  };

// Named exactly as the catalogue (MATCHING_RULES) names them.
export const kana_width: NameRule = ruleOf();
export const corporate_abbreviation: NameRule = ruleOf('corporate_abbreviation');
export const decorated: NameRule = ruleOf('decorated');
export const truncated: NameRule = ruleOf('truncated');
