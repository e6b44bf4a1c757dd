import { LONG_VOWEL, NAME_RULES, bankForm, corporateForms, normaliseName, withoutCorporateForms } from '@pmatch/contracts';
import { nameMatcher } from '../src/domain/names/matcher';
import {
  corporate_abbreviation,
  decorated,
  depositorName,
  halfWidthLength,
  isCutFrom,
  kana_width,
  truncated,
  withoutDecoration,
} from '../src/domain/names/rules';
import { NAME_CORPUS, RULE_SETS, type RuleSetName } from './fixtures/names-corpus';

const RULE_SET_NAMES = Object.keys(RULE_SETS) as RuleSetName[];
/** The fit under the seller's rules, leaving out a fit found only under rules not enabled. */
const byRules = <F extends { outsideRules?: boolean }>(fit: F | undefined): F | undefined => (fit?.outsideRules === true ? undefined : fit);
const MATCHERS = Object.fromEntries(RULE_SET_NAMES.map((set) => [set, nameMatcher(RULE_SETS[set])])) as Record<RuleSetName, ReturnType<typeof nameMatcher>>;

describe('the names corpus', () => {
  test('when counted, then it holds at least 200 distinct pairs', () => {
    const pairs = new Set(NAME_CORPUS.map((c) => `${c.depositor}\u0000${c.payer}`));
    expect(NAME_CORPUS.length).toBeGreaterThanOrEqual(200);
    expect(pairs.size).toBe(NAME_CORPUS.length);
  });

  test.each(NAME_CORPUS)('$note: $depositor ~ $payer', ({ depositor, payer, expected }) => {
    const actual = Object.fromEntries(RULE_SET_NAMES.map((set) => [set, byRules(MATCHERS[set](depositor, payer))?.reason]));
    expect(actual).toEqual(expected);
  });

  test.each(NAME_CORPUS)(
    'when a pair fits only under rules not enabled, then it is marked outside the rules with the fit every rule gives: $depositor ~ $payer',
    ({ depositor, payer, expected }) => {
      for (const set of RULE_SET_NAMES) {
        const fit = MATCHERS[set](depositor, payer);
        if (expected[set] !== undefined) expect(fit).toMatchObject({ reason: expected[set] });
        else if (expected.all === undefined) expect(fit).toBeUndefined();
        else expect(fit).toMatchObject({ reason: expected.all, outsideRules: true });
      }
    },
  );
});

describe('normaliseName (kana_width)', () => {
  test('when kana are half-width, then they become full-width with dakuten and handakuten joined', () => {
    expect(normaliseName('ｶﾞｷﾞﾊﾟﾎﾟｳﾞ')).toBe('ガギパポヴ');
  });

  test('when a spacing dakuten follows a kana, then they are joined too', () => {
    expect(normaliseName('カ゛ハ゜')).toBe('ガパ');
  });

  test('when the name is hiragana, then it becomes katakana', () => {
    expect(normaliseName('やまだ ゔぁ ゝゞ')).toBe('ヤマダヴアヽヾ');
  });

  test('when kana are small, full-width or half-width, then they become large', () => {
    expect(normaliseName('ァィゥェォッャュョヮヵヶ')).toBe('アイウエオツヤユヨワカケ');
    expect(normaliseName('ｧｨｩｪｫｯｬｭｮ')).toBe('アイウエオツヤユヨ');
    expect(normaliseName('ぁぃぅぇぉっゃゅょゎゕゖ')).toBe('アイウエオツヤユヨワカケ');
  });

  test.each([
    ['ー', 'katakana prolonged sound mark'],
    ['ｰ', 'half-width prolonged sound mark'],
    ['-', 'hyphen-minus'],
    ['－', 'full-width hyphen-minus'],
    ['\u2010', 'hyphen'],
    ['\u2011', 'non-breaking hyphen'],
    ['\u2012', 'figure dash'],
    ['\u2013', 'en dash'],
    ['\u2014', 'em dash'],
    ['\u2015', 'horizontal bar'],
    ['\u2212', 'minus sign'],
    ['\u2500', 'box drawing horizontal'],
    ['\uFE58', 'small em dash'],
    ['\uFE63', 'small hyphen-minus'],
    ['〜', 'wave dash'],
    ['～', 'full-width tilde'],
  ])('when the long vowel is written %s (%s), then it becomes ー', (variant) => {
    expect(normaliseName(`ラ${variant}メン`)).toBe(`ラ${LONG_VOWEL}メン`);
  });

  test('when a long vowel is dropped, then the names stay different (a person decides)', () => {
    expect(normaliseName('ﾗﾒﾝ')).not.toBe(normaliseName('ラーメン'));
  });

  test('when Latin letters are lower-case or full-width, then they become upper-case ASCII', () => {
    expect(normaliseName('John ｓｍｉｔｈ ＡＢＣ')).toBe('JOHNSMITHABC');
  });

  test('when the name holds whitespace of any kind, then it is removed', () => {
    expect(normaliseName(' ﾔﾏﾀﾞ\tﾀ\u3000ﾛ\u00A0ｳ\u200B\n')).toBe('ヤマダタロウ');
  });

  test('when the name holds kanji, digits and brackets, then kanji stay and the rest becomes ASCII', () => {
    expect(normaliseName('株式会社（１２３）')).toBe('株式会社(123)');
  });

  test('when a normalised name is normalised again, then it is unchanged', () => {
    for (const c of NAME_CORPUS) {
      for (const name of [c.depositor, c.payer]) expect(normaliseName(normaliseName(name))).toBe(normaliseName(name));
    }
  });
});

describe('kana_width', () => {
  test('when the names differ in width, script, small kana and spaces, then they fit', () => {
    expect(kana_width('ｷﾕｳﾖ ﾀﾛｳ', 'きゅうよ　たろう')).toBe(true);
  });

  test('when the names are the same kana in another order, then they do not fit', () => {
    expect(kana_width('ﾀﾛｳ ﾔﾏﾀﾞ', 'ヤマダ タロウ')).toBe(false);
  });

  test('when one name is empty, then nothing fits', () => {
    expect(kana_width(' ', '\u3000')).toBe(false);
  });
});

describe('corporate_abbreviation', () => {
  /** Every abbreviation of REFERENCES "Japanese bank transfers (Zengin)", branch markers included. */
  const ABBREVIATIONS = ['ｶ', 'ﾕ', 'ﾒ', 'ｼ', 'ﾄﾞ', 'ｲ', 'ｻﾞｲ', 'ｼﾔ', 'ｼﾕｳ', 'ｶﾞｸ', 'ﾌｸ', 'ｿ', 'ﾄｸﾋ', 'ﾄﾞｸ', 'ｴｲ', 'ｼﾕﾂ', 'ﾚﾝ', 'ｷﾖｳｸﾐ'];

  test.each(ABBREVIATIONS)('when %s stands at the front, in the middle or at the end, then it is removed', (abbreviation) => {
    expect(corporate_abbreviation(`${abbreviation})ﾐﾗｲ`, 'ミライ')).toBe(true);
    expect(corporate_abbreviation(`ﾐﾗｲ(${abbreviation})ﾗﾎﾞ`, 'ミライラボ')).toBe(true);
    expect(corporate_abbreviation(`ﾐﾗｲ(${abbreviation}`, 'ミライ')).toBe(true);
  });

  test.each(['（カ）ミライ', '(ｶ)ﾐﾗｲ', 'カ）ミライ', 'ミライ（カ', '㈱ミライ', 'ミライ（株）'])(
    'when the brackets are full-width or half-width (%s), then the form is removed',
    (name) => {
      expect(withoutCorporateForms(normaliseName(name))).toBe('ミライ');
    },
  );

  test.each([
    ['株式会社ミライ', 'kanji, front'],
    ['ミライ株式会社', 'kanji, end'],
    ['カブシキガイシャミライ', 'reading'],
    ['カブシキガイシヤミライ', 'reading without small kana'],
    ['かぶしきかいしゃミライ', 'unvoiced reading in hiragana'],
    ['特定非営利活動法人ミライ', 'NPO, kanji'],
    ['NPO法人ミライ', 'NPO, Latin'],
    ['一般社団法人ミライ', '一般社団法人, not leaving 一般'],
    ['医療法人社団ミライ', '医療法人社団, not leaving 社団'],
    ['社会福祉法人ミライ', '社会福祉法人'],
  ])('when the full word is %s (%s), then it is removed', (name) => {
    expect(withoutCorporateForms(normaliseName(name))).toBe('ミライ');
  });

  test('when abbreviations share a start, then the longest is removed (シヤ before シ, トクヒ before ト)', () => {
    expect(withoutCorporateForms(normaliseName('ｼﾔ)ﾆﾎﾝ'))).toBe('ニホン');
    expect(withoutCorporateForms(normaliseName('ﾄｸﾋ)ﾆﾎﾝ'))).toBe('ニホン');
    expect(withoutCorporateForms(normaliseName('ﾆﾎﾝ(ｼﾕｳ'))).toBe('ニホン');
    expect(withoutCorporateForms(normaliseName('ﾆﾎﾝ(ｼﾕﾂ'))).toBe('ニホン');
    expect(withoutCorporateForms(normaliseName('ﾆﾎﾝ(ｷﾖｳｸﾐ'))).toBe('ニホン');
    expect([...corporateForms(normaliseName('ｼﾕｳ)ﾆﾎﾝ(ｼﾕﾂ')).types].sort()).toEqual(['シユウ', 'シユツ']);
  });

  test('when カ stands without its bracket, then it is part of the name and stays', () => {
    for (const name of ['タカハシ', 'カタヤマ', 'ヤマダカ', 'ミライカ)', '(カミライ']) {
      expect(withoutCorporateForms(normaliseName(name))).toBe(normaliseName(name));
    }
    expect(corporate_abbreviation('ﾀｶﾊｼ', 'ハシ')).toBe(false);
  });

  test('when a name carries forms, then each is read as the type it names, branch markers included', () => {
    expect(corporateForms(normaliseName('ﾔﾏﾀﾞ(ｶ)ﾄｳｷﾖｳ(ｴｲ'))).toEqual({ rest: 'ヤマダトウキヨウ', types: new Set(['カ', 'エイ']), endKept: false });
    expect(corporateForms(normaliseName('カブシキガイシャ ヤマダ エイギョウショ'))).toEqual({ rest: 'ヤマダ', types: new Set(['カ', 'エイ']), endKept: false });
    expect(corporateForms(normaliseName('ｶ)ﾔﾏﾀﾞ'))).toEqual({ rest: 'ヤマダ', types: new Set(['カ']), endKept: true });
  });

  test('when both names carry a legal form and the forms differ, then they do not fit: two entities', () => {
    expect(corporate_abbreviation('ﾕ)ﾐﾗｲ', '株式会社ミライ')).toBe(false);
    expect(corporate_abbreviation('ｶ)ﾐﾗｲ', '有限会社ミライ')).toBe(false);
    expect(corporate_abbreviation('ﾐﾗｲ(ｴｲ', '株式会社ミライ')).toBe(false);
  });

  test('when the forms are of the same type, however written, or only one name carries one, then they fit', () => {
    expect(corporate_abbreviation('ｶ)ﾐﾗｲ', '株式会社ミライ')).toBe(true);
    expect(corporate_abbreviation('ﾐﾗｲ(ｶ', '(株)ミライ')).toBe(true);
    expect(corporate_abbreviation('ｶ)ﾐﾗｲ', 'ミライ')).toBe(true);
    expect(corporate_abbreviation('ﾐﾗｲ', '有限会社ミライ')).toBe(true);
  });

  test('when nothing is left after removing the forms, then nothing fits', () => {
    expect(corporate_abbreviation('ｶ)', '株式会社')).toBe(false);
  });
});

describe('decorated', () => {
  test.each([
    ['1234567890 ﾔﾏﾀﾞ', 'sender code and a space'],
    ['1234567890ﾔﾏﾀﾞ', 'sender code'],
    ['ﾔﾏﾀﾞ 0012', 'trailing number'],
    ['ﾔﾏﾀﾞ(0012)', 'bracketed number'],
    ['(12)ﾔﾏﾀﾞ(34)', 'bracketed numbers at both ends'],
    ['ﾌﾘｺﾐ ﾔﾏﾀﾞ', 'フリコミ'],
    ['ﾌﾘｺﾐ-ﾔﾏﾀﾞ', 'フリコミ and a hyphen'],
    ['振込:ヤマダ', '振込 and a colon'],
    ['12 ﾌﾘｺﾐ ﾔﾏﾀﾞ 34', 'everything at once'],
  ])('when the depositor name is %s (%s), then the decoration is removed', (name) => {
    expect(withoutDecoration(normaliseName(name))).toBe('ヤマダ');
  });

  test('when digits stand inside the name, then they stay', () => {
    expect(withoutDecoration(normaliseName('ﾔﾏﾀﾞ 12 ﾀﾛｳ'))).toBe('ヤマダ12タロウ');
  });

  test('when the payer name is decorated, then it stays decorated: the rule changes the deposit only', () => {
    expect(decorated('ﾔﾏﾀﾞ', '1234 ヤマダ')).toBe(false);
    expect(decorated('1234 ﾔﾏﾀﾞ', 'ヤマダ')).toBe(true);
  });

  test('when the depositor name is decoration only, then nothing fits', () => {
    expect(decorated('ﾌﾘｺﾐ 1234', 'フリコミ')).toBe(false);
  });
});

describe('truncated', () => {
  const LONG_PAYER = 'ヨコハマミナトミライデジタルマーケティングアンドブランディングソリューションズジギョウブ';
  const CUT_AT_48 = 'ﾖｺﾊﾏﾐﾅﾄﾐﾗｲﾃﾞｼﾞﾀﾙﾏｰｹﾃｲﾝｸﾞｱﾝﾄﾞﾌﾞﾗﾝﾃﾞｲﾝｸﾞｿﾘﾕｰｼﾖﾝｽﾞｼ';

  test('when a name is measured, then it counts half-width characters as a bank prints them, sender code included', () => {
    expect(halfWidthLength('ﾔﾏﾀﾞ ﾀﾛｳ')).toBe(8);
    expect(halfWidthLength('ヤマダ　タロウ')).toBe(8);
    expect(halfWidthLength('やまだ たろう')).toBe(8);
    expect(halfWidthLength(' 1234 ｶ)ﾐﾗｲ ')).toBe(10);
    expect(halfWidthLength('ＡＢＣ－ヴ')).toBe(6);
    expect(halfWidthLength('山田 太郎')).toBeUndefined();
  });

  test('when the depositor name fills a bank field of 48, 37 or 26, then its end may be a cut; at any other length it is not', () => {
    expect([26, 37, 48].map((n) => depositorName('A'.repeat(n)).fillsBankField)).toEqual([true, true, true]);
    expect([6, 25, 27, 36, 38, 47, 49].map((n) => depositorName('A'.repeat(n)).fillsBankField)).toEqual(Array(7).fill(false));
  });

  test('when the cut filled a field, then a strict prefix fits; short of a field it does not', () => {
    expect(truncated(CUT_AT_48.slice(0, 37), LONG_PAYER)).toBe(true);
    expect(truncated(CUT_AT_48.slice(0, 36), LONG_PAYER)).toBe(false);
    expect(truncated('ﾔﾏﾀﾞﾀﾛｳ', 'ヤマダタロウジ')).toBe(false);
  });

  test('when the compared name is short of 6 characters, then it is no cut even at a field end', () => {
    expect(isCutFrom('ヤマダタロウ', 'ヤマダタロウジ', true)).toBe(true);
    expect(isCutFrom('ヤマダタロ', 'ヤマダタロウ', true)).toBe(false);
  });

  test('when the names are equal, then it is not a cut (a strict prefix is required)', () => {
    expect(isCutFrom('ヤマダタロウ', 'ヤマダタロウ', true)).toBe(false);
  });

  test('when the cut at a field end fell between a kana and its dakuten, then it fits', () => {
    expect(truncated(CUT_AT_48, LONG_PAYER)).toBe(true);
    expect(truncated('ﾆﾎﾝｲﾝﾀｰﾅｼﾖﾅﾙｺﾝﾋﾟﾕｰﾀｰｼｽﾃﾑｴﾝｼﾞﾆｱﾘﾝｸﾞｻｰﾋ', 'ニホンインターナショナルコンピューターシステムエンジニアリングサービスセンター')).toBe(true);
  });

  test('when a final dakuten is missing short of a field end, then it is another name: ユウコ is not ユウゴ', () => {
    expect(truncated('ｻﾄｳ ﾕｳｺ', 'サトウ ユウゴ')).toBe(false);
    expect(truncated('ﾔﾏﾀﾞｼﾖｳｼ', 'ヤマダショウジ')).toBe(false);
    expect(nameMatcher(NAME_RULES)('ｻﾄｳ ﾕｳｺ', 'サトウ ユウゴ')).toBeUndefined();
  });

  test('when a dakuten is missing before the last character, then it does not fit', () => {
    expect(truncated(`${CUT_AT_48.slice(0, 12)}ｼ${CUT_AT_48.slice(14)}`, LONG_PAYER)).toBe(false);
  });

  test('when the compared name does not end where the bank name ended, then a missing dakuten is not a cut', () => {
    expect(isCutFrom('ヤマダショウシ', 'ヤマダショウジ', false)).toBe(false);
    const everyRule = nameMatcher(NAME_RULES);
    const name = CUT_AT_48.slice(0, 43);
    expect(everyRule(`${name} 1234`, LONG_PAYER)).toBeUndefined();
    expect(everyRule(`1234 ${name}`, LONG_PAYER)).toMatchObject({ reason: 'rule:truncated' });
  });

  test('when the names are kana_width-equal, then truncated alone fits them too (each rule includes kana_width)', () => {
    expect(truncated('ﾔﾏﾀﾞﾀﾛｳ', 'ヤマダタロウ')).toBe(true);
  });

  test('when the depositor name is longer than the payer name, then it does not fit', () => {
    expect(truncated('ﾔﾏﾀﾞ ﾀﾛｳｻﾞｴﾓﾝ', 'ヤマダ タロウ')).toBe(false);
  });
});

describe('nameMatcher', () => {
  test('when no rule is enabled, then only exact names fit', () => {
    const fit = nameMatcher([]);
    expect(fit(' ﾔﾏﾀﾞ ', 'ﾔﾏﾀﾞ')).toEqual({ reason: 'exact', rank: 0, applied: [] });
    expect(byRules(fit('ﾔﾏﾀﾞ', 'ヤマダ'))).toBeUndefined();
  });

  test('when names are exact, then exact wins even with every rule enabled', () => {
    expect(nameMatcher(NAME_RULES)('ｶ)ﾐﾗｲ', 'ｶ)ﾐﾗｲ')).toMatchObject({ reason: 'exact', rank: 0 });
  });

  test('when several rules fit, then the first in catalogue order wins, whatever order they were given in', () => {
    const fit = nameMatcher(['truncated', 'corporate_abbreviation'])('ﾔﾏﾀﾞｼﾖｳｼﾞ', 'ヤマダショウジ株式会社');
    expect(fit).toEqual({ reason: 'rule:corporate_abbreviation', rank: 2, applied: ['corporate_abbreviation'] });
  });

  test('when a rule fits, then its rank is 1 + its catalogue index', () => {
    expect(nameMatcher(['kana_width'])('ﾔﾏﾀﾞ', 'ヤマダ')?.rank).toBe(1);
    expect(nameMatcher(['corporate_abbreviation'])('ｶ)ﾔﾏﾀﾞ', 'ヤマダ')?.rank).toBe(2);
    expect(nameMatcher(['decorated'])('12 ﾔﾏﾀﾞ', 'ヤマダ')?.rank).toBe(3);
    expect(
      nameMatcher(['truncated'])(
        'ﾖｺﾊﾏﾐﾅﾄﾐﾗｲﾃﾞｼﾞﾀﾙﾏｰｹﾃｲﾝｸﾞｱﾝﾄﾞﾌﾞﾗﾝﾃﾞｲﾝｸﾞｿﾘﾕｰｼﾖﾝｽﾞｼ',
        'ヨコハマミナトミライデジタルマーケティングアンドブランディングソリューションズジギョウブ',
      )?.rank,
    ).toBe(4);
  });

  test('when kana_width is not enabled, then the other rules still include it', () => {
    expect(nameMatcher(['decorated'])('ﾔﾏﾀﾞ', 'やまだ')).toEqual({ reason: 'rule:decorated', rank: 3, applied: ['kana_width'] });
    expect(nameMatcher(['decorated'])('ﾔﾏﾀﾞ 2', 'ヤマダ 2')).toEqual({ reason: 'rule:decorated', rank: 3, applied: ['kana_width'] });
    expect(nameMatcher(['corporate_abbreviation'])('ﾔﾏﾀﾞ', 'ヤマダ')).toEqual({ reason: 'rule:corporate_abbreviation', rank: 2, applied: ['kana_width'] });
  });

  test('when only one rule is enabled, then a kana_width-equal name fits at that rule as well as one its change fits', () => {
    const onlyTruncated = nameMatcher(['truncated']);
    const cut = 'ﾖｺﾊﾏﾐﾅﾄﾐﾗｲﾃﾞｼﾞﾀﾙﾏｰｹﾃｲﾝｸﾞｱﾝﾄﾞﾌﾞﾗﾝﾃﾞｲﾝｸﾞｿﾘﾕｰｼﾖﾝｽﾞｼ';
    expect(onlyTruncated(cut, 'ヨコハマミナトミライデジタルマーケティングアンドブランディングソリューションズシ')?.rank).toBe(
      onlyTruncated(cut, 'ヨコハマミナトミライデジタルマーケティングアンドブランディングソリューションズジギョウブ')?.rank,
    );
    const onlyDecorated = nameMatcher(['decorated']);
    expect(onlyDecorated('ﾔﾏﾀﾞ ﾀﾛｳ 2', 'ヤマダ タロウ 2')?.rank).toBe(onlyDecorated('ﾔﾏﾀﾞ ﾀﾛｳ 2', 'ヤマダ タロウ')?.rank);
  });

  test('when a deposit needs two enabled rules, then it fits under the later one and says which changes it needed', () => {
    const fit = nameMatcher(['corporate_abbreviation', 'decorated'])('1234 ｶ)ﾐﾗｲﾗﾎﾞ', '株式会社ミライラボ');
    expect(fit).toEqual({ reason: 'rule:decorated', rank: 3, applied: ['corporate_abbreviation', 'decorated'] });
  });

  test('when a deposit would need a later rule than the one enabled, then it does not fit', () => {
    expect(nameMatcher(['corporate_abbreviation'])('1234 ｶ)ﾐﾗｲﾗﾎﾞ', '株式会社ミライラボ')).toMatchObject({ reason: 'rule:decorated', outsideRules: true });
  });

  test('when an earlier rule is not enabled, then a later rule does not borrow its change', () => {
    const deposit = `ｶ)${'ﾖｺﾊﾏﾐﾅﾄﾐﾗｲﾃﾞｼﾞﾀﾙﾏｰｹﾃｲﾝｸﾞｱﾝﾄﾞﾌﾞﾗﾝﾃﾞｲﾝｸﾞｿﾘﾕｰｼﾖﾝｽﾞｼ'.slice(0, 46)}`;
    const payer = '株式会社ヨコハマミナトミライデジタルマーケティングアンドブランディングソリューションズジギョウブ';
    expect(byRules(nameMatcher(['decorated', 'truncated'])(deposit, payer))).toBeUndefined();
    expect(nameMatcher(['corporate_abbreviation', 'truncated'])(deposit, payer)).toMatchObject({ reason: 'rule:truncated' });
  });

  test('when only kana_width was needed, then applied says so', () => {
    expect(nameMatcher(NAME_RULES)('ﾔﾏﾀﾞ', 'ヤマダ')).toEqual({ reason: 'rule:kana_width', rank: 1, applied: ['kana_width'] });
  });
});

describe('bankForm', () => {
  test.each([
    ['ヤマダ　タロウ', 'ﾔﾏﾀﾞ ﾀﾛｳ'],
    ['やまだ  たろう', 'ﾔﾏﾀﾞ ﾀﾛｳ'],
    ['いとう しょうた', 'ｲﾄｳ ｼﾖｳﾀ'],
    ['ジョージ スミス', 'ｼﾞﾖｰｼﾞ ｽﾐｽ'],
    ['John Smith', 'JOHN SMITH'],
    ['株式会社ミライラボ', 'ｶ)ﾐﾗｲﾗﾎﾞ'],
    ['㈱ミライラボ', 'ｶ)ﾐﾗｲﾗﾎﾞ'],
    ['ミライラボ（株）', 'ﾐﾗｲﾗﾎﾞ(ｶ'],
    ['ヤマダ株式会社トウキョウエイギョウショ', 'ﾔﾏﾀﾞ(ｶ)ﾄｳｷﾖｳ(ｴｲ'],
    ['NPO法人アオゾラ', 'ﾄｸﾋ)ｱｵｿﾞﾗ'],
  ])('when a merchant wrote %s, then a bank prints %s', (name, printed) => {
    expect(bankForm(name)).toBe(printed);
  });

  test.each([['山田 太郎'], ['ジョン・スミス'], ['ヤマダ！']])('when the name holds a character no bank prints (%s), then it has no bank form', (name) => {
    expect(bankForm(name)).toBeUndefined();
  });

  test('when a name is printed by the bank, then it fits its own order by kana_width and corporate_abbreviation', () => {
    const fit = nameMatcher(['kana_width', 'corporate_abbreviation']);
    for (const name of ['ヤマダ　タロウ', 'いとう しょうた', '株式会社ミライラボ', 'ミライラボ（株）']) expect(fit(bankForm(name)!, name)).toBeDefined();
  });
});
