import { csvLine, csvText } from '../src/console/csv';

/** The console's CSV cells: quoted text, whole numbers, and no cell a spreadsheet would run as a formula. */

test.each(['=1+2', '+81 3 1234', '-2+3', '@SUM(A1)', '\t=1', '\r=1', '＝1+2'])(
  'when a text cell starts like a formula (%j), then it gets a leading quote',
  (value) => {
    expect(csvText(value)).toBe(`"'${value}"`);
  },
);

test('when a text cell holds quotes, commas or a line break, then it is quoted with its quotes doubled, and an ordinary name is left as it is', () => {
  expect(csvText('ｶ)ｴｸｾﾙ, "本店"\n')).toBe('"ｶ)ｴｸｾﾙ, ""本店""\n"');
  expect(csvText('サトウ ハナコ')).toBe('"サトウ ハナコ"');
  expect(csvText('1-2')).toBe('"1-2"');
});

test('when a line is written, then numbers are bare digits (a negative one too), absent cells empty, and the line ends in CRLF', () => {
  expect(csvLine([12345n, -440, null, undefined, 'a'])).toBe('12345,-440,,,"a"\r\n');
});
