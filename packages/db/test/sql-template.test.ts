import { columns, sql, preparedQuery, type Placeholders } from '../src';

/** Statements written with named parameters: the text PostgreSQL prepares, and the values bound to it. */

describe('statement', () => {
  test('when parameters are named, then they are numbered in the order they first appear, and bound by name', () => {
    const s = preparedQuery<{ id: string; status: string }>('test.numbering', (p) => sql`UPDATE orders SET status = ${p.status} WHERE id = ${p.id}`);

    expect(s.text).toBe('UPDATE orders SET status = $1 WHERE id = $2');
    expect(s.parameters).toEqual(['status', 'id']);
    expect(s.bind({ id: 'ord_1', status: 'paid' })).toEqual(['paid', 'ord_1']);
  });

  test('when a parameter recurs, then it keeps its number and its value is bound once', () => {
    const s = preparedQuery<{ at: Date; id: string }>(
      'test.repeated',
      (p) => sql`UPDATE orders SET closed_at = ${p.at}, updated_at = ${p.at} WHERE id = ${p.id} AND ${p.at} > ordered_at`,
    );
    const at = new Date('2026-11-22T00:00:00Z');

    expect(s.text).toBe('UPDATE orders SET closed_at = $1, updated_at = $1 WHERE id = $2 AND $1 > ordered_at');
    expect(s.bind({ at, id: 'ord_1' })).toEqual([at, 'ord_1']);
  });

  test('when a parameter is an array with a cast, then the cast stays in the text and the array is bound whole', () => {
    const s = preparedQuery<{ ids: string[]; amounts: bigint[] }>(
      'test.arrays',
      (p) => sql`SELECT * FROM unnest(${p.ids}::text[], ${p.amounts}::bigint[]) AS u(id, amount)`,
    );

    expect(s.text).toBe('SELECT * FROM unnest($1::text[], $2::bigint[]) AS u(id, amount)');
    expect(s.bind({ ids: ['a', 'b'], amounts: [1n, 2n] })).toEqual([
      ['a', 'b'],
      [1n, 2n],
    ]);
  });

  test('when fragments are nested, then their parameters are numbered across the whole text, and constants stay text', () => {
    const cap = 1000;
    const condition = (p: Placeholders<{ account: string }>) => sql`bank_account_id = ${p.account} AND status = ${"'open'"}`;
    const s = preparedQuery<{ account: string; limit: number }>(
      'test.fragments',
      (p) => sql`SELECT id FROM orders WHERE ${condition(p)} LIMIT ${cap} OFFSET ${p.limit} -- ${condition(p)}`,
    );

    expect(s.text).toBe(
      "SELECT id FROM orders WHERE bank_account_id = $1 AND status = 'open' LIMIT 1000 OFFSET $2 -- bank_account_id = $1 AND status = 'open'",
    );
    expect(s.bind({ account: 'ba_1', limit: 5 })).toEqual(['ba_1', 5]);
  });

  test('when the same statement is built again or bound to other values, then its text is the same, as its prepared name requires', () => {
    const build = () => preparedQuery<{ id: string }>('test.same_text', (p) => sql`SELECT ${p.id}::text AS id`);
    const s = build();

    expect(build().text).toBe(s.text);
    expect(s.bind({ id: 'a' })).toEqual(['a']);
    expect(s.bind({ id: 'b' })).toEqual(['b']);
    expect(s.text).toBe('SELECT $1::text AS id');
  });

  test('when a value is missing, then binding fails and names the parameter; null is a value', () => {
    const s = preparedQuery<{ id: string; note: string | null }>('test.missing', (p) => sql`SELECT ${p.id}, ${p.note}`);

    expect(() => s.bind({ id: 'a' } as { id: string; note: string | null })).toThrow('statement test.missing: no value for note');
    expect(s.bind({ id: 'a', note: null })).toEqual(['a', null]);
  });

  test('when a statement has no parameters, then its text is as written and nothing is bound', () => {
    const s = preparedQuery('test.none', sql`SELECT 1`);

    expect(s.text).toBe('SELECT 1');
    expect(s.bind({})).toEqual([]);
  });
});

describe('columns', () => {
  test("when rows are given, then each key becomes an array in the rows' order", () => {
    expect(
      columns([
        { id: 'a', n: 1 },
        { id: 'b', n: 2 },
      ]),
    ).toEqual({ id: ['a', 'b'], n: [1, 2] });
  });

  test('when no row is given, then it fails rather than give no columns', () => {
    expect(() => columns([])).toThrow(RangeError);
  });
});
