import { ID_PREFIX, idPattern, newId, randomBase62, type IdKind } from '../src/ids';

test("when an id is made, then it carries its kind's prefix and matches its pattern", () => {
  for (const kind of Object.keys(ID_PREFIX) as IdKind[]) {
    const id = newId(kind);
    expect(id).toMatch(idPattern(kind));
    expect(id.startsWith(`${ID_PREFIX[kind]}_`)).toBe(true);
  }
});

test('when random base62 text is drawn, then it has the length asked for and every character is as likely as any other', () => {
  expect(randomBase62(32)).toMatch(/^[0-9A-Za-z]{32}$/);
  const drawn = Array.from({ length: 10_000 }, () => randomBase62(62)).join('');
  const counts = new Map<string, number>();
  for (const character of drawn) counts.set(character, (counts.get(character) ?? 0) + 1);

  expect(counts.size).toBe(62);
  // 10,000 of each expected, standard deviation about 99: 5 % either side is five of them, while a
  // plain `byte % 62` would draw eight characters 25 % too often.
  const expected = drawn.length / 62;
  for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.05);
});
