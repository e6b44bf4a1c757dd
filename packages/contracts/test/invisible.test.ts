import { withoutControlCharacters } from '../src';

describe('withoutControlCharacters', () => {
  test('when a name carries bidirectional overrides, isolates and marks, then they are removed and the letters kept in order', () => {
    const marks = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];

    for (const mark of marks) expect(withoutControlCharacters(`ﾔﾏﾀﾞ${mark} ﾀﾛｳ`)).toBe('ﾔﾏﾀﾞ ﾀﾛｳ');
    expect(withoutControlCharacters('\u202eｳﾛﾀ ﾀﾞﾏﾔ\u202c')).toBe('ｳﾛﾀ ﾀﾞﾏﾔ');
  });

  test('when a name carries C0 or C1 controls, zero-width or BOM characters, then they are removed', () => {
    expect(withoutControlCharacters('山田\u0000\u0007\u001b[31m\u007f\u0085\u009b太郎')).toBe('山田[31m太郎');
    expect(withoutControlCharacters('\ufeffヤマダ\u200bタロウ\u200d\u00ad')).toBe('ヤマダタロウ');
  });

  test('when a name has only visible characters, then it is returned unchanged, kana, kanji, full-width and marks alike', () => {
    for (const name of ['ﾔﾏﾀﾞ ﾀﾛｳ', '山田　太郎', 'ヤマダ・タロウ（カ', 'Ｙａｍａｄａ', "O'Brien-Smith", 'Café'])
      expect(withoutControlCharacters(name)).toBe(name);
  });
});
