import { normaliseName } from './normalise';

/**
 * One corporate type of the Zengin table (docs/bank-formats.md): the words
 * a buyer types for it and the abbreviation a bank notification carries. Spelled naturally here
 * (カブシキガイシャ); the table is normalised once, so ャ and ャ's large form ヤ both match.
 */
interface CorporateType {
  /** Full names and their readings; removed wherever they appear. */
  words: string[];
  /**
   * Zengin abbreviation first (it names the type when two names' forms are compared), then the
   * kanji one a buyer types ((株), ㈱); removed only in brackets.
   */
  abbreviations: string[];
}

const GAISHA = (stem: string): string[] => [`${stem}ガイシャ`, `${stem}カイシャ`];

/**
 * Every form of the Zengin table, branch markers included: a deposit from `ﾔﾏﾀﾞ(ｶ)ﾄｳｷﾖｳ(ｴｲ` is the
 * Tokyo sales office of 株式会社ヤマダ, and only an order naming that office carries the same
 * forms (see `corporateForms`), so the head office's order is not fitted by mistake.
 */
const CORPORATE_TYPES: CorporateType[] = [
  { words: ['株式会社', ...GAISHA('カブシキ')], abbreviations: ['カ', '株'] },
  { words: ['有限会社', ...GAISHA('ユウゲン')], abbreviations: ['ユ', '有'] },
  { words: ['合名会社', ...GAISHA('ゴウメイ')], abbreviations: ['メ', '名'] },
  { words: ['合資会社', ...GAISHA('ゴウシ')], abbreviations: ['シ', '資'] },
  { words: ['合同会社', ...GAISHA('ゴウドウ')], abbreviations: ['ド', '同'] },
  {
    words: ['医療法人社団', '医療法人財団', '医療法人', 'イリョウホウジンシャダン', 'イリョウホウジンザイダン', 'イリョウホウジン'],
    abbreviations: ['イ', '医'],
  },
  {
    words: ['一般財団法人', '公益財団法人', '財団法人', 'イッパンザイダンホウジン', 'コウエキザイダンホウジン', 'ザイダンホウジン'],
    abbreviations: ['ザイ', '財'],
  },
  {
    words: ['一般社団法人', '公益社団法人', '社団法人', 'イッパンシャダンホウジン', 'コウエキシャダンホウジン', 'シャダンホウジン'],
    abbreviations: ['シヤ', '社'],
  },
  { words: ['宗教法人', 'シュウキョウホウジン'], abbreviations: ['シユウ', '宗'] },
  { words: ['学校法人', 'ガッコウホウジン'], abbreviations: ['ガク', '学'] },
  { words: ['社会福祉法人', 'シャカイフクシホウジン'], abbreviations: ['フク', '福'] },
  { words: ['相互会社', ...GAISHA('ソウゴ')], abbreviations: ['ソ'] },
  {
    words: ['特定非営利活動法人', 'NPO法人', 'トクテイヒエイリカツドウホウジン', 'エヌピーオーホウジン'],
    abbreviations: ['トクヒ'],
  },
  { words: ['独立行政法人', 'ドクリツギョウセイホウジン'], abbreviations: ['ドク'] },
  { words: ['営業所', 'エイギョウショ', 'エイギョウジョ'], abbreviations: ['エイ'] },
  { words: ['出張所', 'シュッチョウショ', 'シュッチョウジョ'], abbreviations: ['シユツ'] },
  { words: ['連合会', 'レンゴウカイ'], abbreviations: ['レン'] },
  { words: ['協同組合', 'キョウドウクミアイ'], abbreviations: ['キヨウクミ'] },
];

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Longest first, so トクヒ wins over ヒ, シヤ over シ, 一般社団法人 over 社団法人. */
function alternation(forms: string[]): string {
  const normalised = [...new Set(forms.map(normaliseName))];
  return normalised
    .sort((a, b) => b.length - a.length || a.localeCompare(b))
    .map(escape)
    .join('|');
}

/** Each normalised form (word or abbreviation) and the type it names, by its Zengin abbreviation. */
const TYPE_OF_FORM: ReadonlyMap<string, string> = (() => {
  const types = new Map<string, string>();
  for (const t of CORPORATE_TYPES) {
    const type = normaliseName(t.abbreviations[0]!);
    for (const form of [...t.words, ...t.abbreviations].map(normaliseName)) {
      const other = types.get(form);
      if (other !== undefined && other !== type) throw new Error(`corporate form ${form} names two types (${other}, ${type})`);
      types.set(form, type);
    }
  }
  return types;
})();

const WORDS = alternation(CORPORATE_TYPES.flatMap((t) => t.words));
const ABBREVIATIONS = alternation(CORPORATE_TYPES.flatMap((t) => t.abbreviations));

/**
 * A corporate form in a normalised name. Abbreviations count only with their brackets in the
 * Zengin positions — front `カ)`, middle `(カ)`, end `(カ` — so the bare カ of タカハシ stays.
 * Brackets are ASCII here because normalisation has folded （ ） and the half-width ones to ( ).
 * One capture group per position holds the form itself.
 */
const CORPORATE_FORM = new RegExp(`(${WORDS})|^(${ABBREVIATIONS})\\)|\\((${ABBREVIATIONS})\\)|\\((${ABBREVIATIONS})$`, 'gu');

/** A normalised name taken apart into its corporate forms and the rest. */
export interface CorporateParts {
  /** The name without its corporate forms. */
  rest: string;
  /** The types its forms name (by Zengin abbreviation: カ, ユ, エイ …); empty when it has none. */
  types: ReadonlySet<string>;
  /** Whether the rest still ends where the name ended (no end form was removed). */
  endKept: boolean;
}

const FORM_WITH_SPACES = new RegExp(`\\s*(?:${CORPORATE_FORM.source})\\s*`, 'gu');

/**
 * A folded name (spaces kept) with each corporate form, word or bracketed abbreviation, written as a
 * bank abbreviates it, by its position: front `カ)`, middle `(カ)`, end `(カ`.
 */
export function abbreviateCorporateForms(foldedName: string): string {
  return foldedName.replace(FORM_WITH_SPACES, (match: string, word?: string, front?: string, middle?: string, end?: string, offset?: number) => {
    const abbreviation = TYPE_OF_FORM.get((word ?? front ?? middle ?? end)!)!;
    if (offset === 0) return `${abbreviation})`;
    if (offset! + match.length === foldedName.length) return `(${abbreviation}`;
    return `(${abbreviation})`;
  });
}

export function corporateForms(normalisedName: string): CorporateParts {
  const types = new Set<string>();
  let endKept = true;
  const rest = normalisedName.replace(CORPORATE_FORM, (match: string, word?: string, front?: string, middle?: string, end?: string, offset?: number) => {
    types.add(TYPE_OF_FORM.get((word ?? front ?? middle ?? end)!)!);
    if (offset! + match.length === normalisedName.length) endKept = false;
    return '';
  });
  return { rest, types, endKept };
}

/** A normalised name without its corporate forms. */
export function withoutCorporateForms(normalisedName: string): string {
  return corporateForms(normalisedName).rest;
}

/**
 * Whether two names' forms allow them to be the same entity: when both carry forms, the forms must
 * name the same types (株式会社ヤマダ and ﾕ)ﾔﾏﾀﾞ are two companies); a name without a form says
 * nothing about its type, so it may be either.
 */
export function sameCorporateTypes(a: CorporateParts, b: CorporateParts): boolean {
  if (a.types.size === 0 || b.types.size === 0) return true;
  return a.types.size === b.types.size && [...a.types].every((t) => b.types.has(t));
}
