import { normaliseName } from './normalise';

/**
 * One corporate type of the Zengin table (REFERENCES "Japanese bank transfers (Zengin)"): the words
 * a buyer types for it and the abbreviation a bank notification carries. Spelled naturally here
 * (カブシキガイシャ); the table is normalised once, so ャ and ャ's large form ヤ both match.
 */
interface CorporateType {
  /** Full names and their readings; removed wherever they appear. */
  words: string[];
  /** Zengin abbreviation and the kanji one a buyer types ((株), ㈱); removed only in brackets. */
  abbreviations: string[];
}

const GAISHA = (stem: string): string[] => [`${stem}ガイシャ`, `${stem}カイシャ`];

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
];
// Not here on purpose: the branch markers エイ (営業所) and シユツ (出張所), and レン (連合会),
// キヨウクミ (協同組合). A branch marker names a part of a company, not its legal form; removing it
// would fit a branch's deposit to the head office's order. Prefer holding for a person.

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Longest first, so トクヒ wins over ヒ, シヤ over シ, 一般社団法人 over 社団法人. */
function alternation(forms: string[]): string {
  const normalised = [...new Set(forms.map(normaliseName))];
  return normalised.sort((a, b) => b.length - a.length || a.localeCompare(b)).map(escape).join('|');
}

const WORDS = alternation(CORPORATE_TYPES.flatMap((t) => t.words));
const ABBREVIATIONS = alternation(CORPORATE_TYPES.flatMap((t) => t.abbreviations));

/**
 * A corporate form in a normalised name. Abbreviations count only with their brackets in the
 * Zengin positions — front `カ)`, middle `(カ)`, end `(カ` — so the bare カ of タカハシ stays.
 * Brackets are ASCII here because normalisation has folded （ ） and the half-width ones to ( ).
 */
const CORPORATE_FORM = new RegExp(`${WORDS}|^(?:${ABBREVIATIONS})\\)|\\((?:${ABBREVIATIONS})\\)|\\((?:${ABBREVIATIONS})$`, 'gu');

/** A normalised name without its corporate forms. */
export function withoutCorporateForms(normalisedName: string): string {
  return normalisedName.replace(CORPORATE_FORM, '');
}
