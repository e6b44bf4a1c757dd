import fc from 'fast-check';
import { camtFile, wareki, zenginFile, type CamtEntrySpec, type ZenginAccountSpec } from '@pmatch/testkit';
import { CamtParser } from '../src/domain/statements/camt';
import { StatementInvalid, type StatementItem, type StatementParser } from '../src/domain/statements/statement';
import { warekiDate } from '../src/domain/statements/wareki';
import { ZenginParser } from '../src/domain/statements/zengin';

const TODAY = '2026-11-27';
const RECEIVED = new Date('2026-11-27T03:00:00Z');

/** Feeds a file in chunks of the given sizes (cycled), as a stream would deliver it. */
function parse(parser: StatementParser, file: Uint8Array, chunkSizes: number[] = [4096]): StatementItem[] {
  const items: StatementItem[] = [];
  let at = 0;
  for (let i = 0; at < file.length; i++) {
    const size = chunkSizes[i % chunkSizes.length]!;
    items.push(...parser.write(file.subarray(at, at + size)));
    at += size;
  }
  items.push(...parser.end());
  return items;
}

const entries = (items: StatementItem[]) => items.flatMap((i) => (i.kind === 'entry' ? [i.entry] : []));

/** The outcome of parsing: the items, or the check that failed. Anything else thrown is a bug (a 500). */
function outcome(make: () => StatementParser, file: Uint8Array, chunkSizes?: number[]): { items?: StatementItem[]; invalid?: StatementInvalid } {
  try {
    return { items: parse(make(), file, chunkSizes) };
  } catch (error) {
    if (error instanceof StatementInvalid) return { invalid: error };
    throw error;
  }
}

describe('和暦 dates', () => {
  test.each([
    ['310430', '2019-04-30'],
    ['010501', '2019-05-01'],
    ['010430', '1989-04-30'],
    ['280503', '2016-05-03'],
    ['081127', '2026-11-27'],
    ['640107', undefined],
    ['080230', undefined],
    ['310501', undefined],
    ['000000', undefined],
  ])('when %s is read, then it is %s', (text, expected) => {
    expect(warekiDate(text, TODAY)).toBe(expected);
  });

  // 令和 YY and 平成 YY share digits: before 1997-11-28 a 平成 day whose 令和 reading is at most a
  // year ahead (平成 1 to 9) is read as 令和; statements of those years are not imported.
  test('when any day from 1997-11-28 to a year from today is written as 和暦, then it reads back as that day', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1997-11-28T00:00:00Z'), max: new Date('2027-11-27T00:00:00Z'), noInvalidDate: true }), (date) => {
        const day = date.toISOString().slice(0, 10);
        expect(warekiDate(wareki(day), TODAY)).toBe(day);
      }),
    );
  });
});

const record = fc.record({
  date: fc.constantFrom('2026-11-20', '2026-11-21', '2019-04-30', '2019-05-01'),
  amount: fc.integer({ min: 1, max: 9_999_999_999 }),
  name: fc.constantFrom('ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ', 'ｻﾄｳ ｼﾞﾛｳ', 'ﾕ)ｸﾞﾘ-ﾝ', 'ABC (ｶ', ''),
  reference: fc.option(fc.integer({ min: 1, max: 999_999 }), { nil: undefined }),
  direction: fc.constantFrom('in' as const, 'out' as const),
});
const accountSpec = fc.record({
  accountNumber: fc.integer({ min: 1, max: 9_999_999 }).map((n) => String(n).padStart(7, '0')),
  typeCode: fc.constantFrom('1', '2', '4'),
  records: fc.array(record, { maxLength: 6 }),
});
const zenginSpec = fc.record({
  kind: fc.constantFrom('01' as const, '03' as const),
  crlf: fc.boolean(),
  accounts: fc.array(accountSpec, { minLength: 1, maxLength: 4 }),
});
const chunking = fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 5 });

describe('Zengin parser', () => {
  test('when a well-formed file of any accounts and records is read in any chunks, then it gives every account and record in order', () => {
    fc.assert(
      fc.property(zenginSpec, chunking, (spec, chunks) => {
        const file = zenginFile({
          ...spec,
          accounts: spec.accounts.map((a) => ({ ...a, records: spec.kind === '01' ? a.records.map((r) => ({ ...r, direction: 'in' as const })) : a.records })),
        });
        const items = parse(new ZenginParser(TODAY), file, chunks);
        expect(items.filter((i) => i.kind === 'account').length).toBe(spec.accounts.length);
        const read = entries(items);
        const written = spec.accounts.flatMap((a, index) => a.records.map((r) => ({ ...r, index })));
        expect(read.map((e) => [e.account, e.amount, e.bookingDay, e.counterparty, e.direction])).toEqual(
          written.map((r) => [r.index, r.amount, r.date, r.name, spec.kind === '03' && r.direction === 'out' ? 'withdrawal' : 'deposit']),
        );
        expect(new Set(read.map((e) => `${e.account}|${e.bankReference}`)).size).toBe(read.length);
      }),
    );
  });

  test('when any bytes of a well-formed file are changed, cut or added, then the parser gives entries or names a record and field; it never fails otherwise', () => {
    const mutation = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        at: fc.nat(),
        byte: fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x80, 0xde, 0x0d, 0x0a, 0x20, 0x39)),
      }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 400 }) }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 3 }) }),
      fc.record({ kind: fc.constant('swap' as const), first: fc.nat(), second: fc.nat() }),
    );
    fc.assert(
      fc.property(zenginSpec, fc.array(mutation, { minLength: 1, maxLength: 4 }), chunking, (spec, mutations, chunks) => {
        let file = Buffer.from(zenginFile(spec));
        for (const m of mutations) {
          if (m.kind === 'set') file[m.at % file.length] = m.byte;
          if (m.kind === 'cut') file = Buffer.concat([file.subarray(0, m.at % file.length), file.subarray((m.at % file.length) + m.length)]);
          if (m.kind === 'insert') file = Buffer.concat([file.subarray(0, m.at % (file.length + 1)), m.bytes, file.subarray(m.at % (file.length + 1))]);
          if (m.kind === 'swap') {
            // Records out of order: two 200-byte records change places.
            const stride = spec.crlf ? 202 : 200;
            const count = Math.floor(file.length / stride);
            const [a, b] = [m.first % count, m.second % count].map((r) => Buffer.from(file.subarray(r * stride, r * stride + stride)));
            a!.copy(file, (m.second % count) * stride);
            b!.copy(file, (m.first % count) * stride);
          }
        }
        const result = outcome(() => new ZenginParser(TODAY), file, chunks);
        if (result.invalid !== undefined) {
          expect(result.invalid.line).toBeGreaterThan(0);
          expect(result.invalid.field).not.toBe('');
        } else {
          for (const e of entries(result.items!)) {
            expect(e.amount).toBeGreaterThan(0);
            expect(e.counterparty).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  test('when a name field holds a stray 0x80 or a lone ﾞ, then the name decodes from that field alone and the fields after it are unchanged', () => {
    const file = zenginFile({
      kind: '03',
      accounts: [{ accountNumber: '1234567', records: [{ date: '2026-11-20', amount: 5000, name: 'ﾔﾏﾀﾞ', memo: 'ﾒﾓ' }] }],
    });
    file[200 + 81] = 0x80;
    file[200 + 82] = 0xde;

    const [entry] = entries(parse(new ZenginParser(TODAY), file));

    expect(file.subarray(200 + 159, 200 + 163)).toEqual(Buffer.from([0xd2, 0xd3, 0x20, 0x20]));
    expect(entry).toMatchObject({ amount: 5000, counterparty: '\ufffdﾞﾀﾞ', bookingDay: '2026-11-20' });
  });

  test.each([
    ['a trailer count', (f: Buffer) => f.write('000009', 200 * 2 + 1, 'latin1'), 3, '入金件数'],
    ['a non-digit amount', (f: Buffer) => f.write('00000000500X', 200 + 24, 'latin1'), 2, '取引金額'],
    ['an end record account count', (f: Buffer) => f.write('00002', 200 * 3 + 11, 'latin1'), 4, '口座数'],
    ['a data record before its header', (f: Buffer) => f.write('2', 0, 'latin1'), 1, 'データ区分'],
    ['LF alone between records', (f: Buffer) => f.write('\n', 200, 'latin1'), 1, 'record separator'],
  ])('when a file has a wrong %s, then the record and field are named', (_case, tamper, line, field) => {
    const file = zenginFile({ kind: '03', accounts: [{ accountNumber: '1234567', records: [{ date: '2026-11-20', amount: 5000, name: 'ﾔﾏﾀﾞ' }] }] });
    const bent = Buffer.concat([file, Buffer.alloc(0)]);
    tamper(bent);

    expect(outcome(() => new ZenginParser(TODAY), bent).invalid).toMatchObject({ line, field });
  });

  test('when a file ends early, then the missing end record is named; a truncated record is named by its length', () => {
    const file = zenginFile({
      kind: '01',
      crlf: true,
      accounts: [{ accountNumber: '1234567', records: [{ date: '2026-11-20', amount: 5000, name: 'ﾔﾏﾀﾞ' }] }],
    });

    expect(outcome(() => new ZenginParser(TODAY), file.subarray(0, 202 * 3)).invalid).toMatchObject({ line: 4, field: 'データ区分' });
    expect(outcome(() => new ZenginParser(TODAY), file.subarray(0, 202 * 3 + 100)).invalid).toMatchObject({ line: 4, field: 'record length' });
  });

  test('when a 50 MiB file (262,144 records) is streamed through the parser, then the heap stays within a few MiB of where it began', () => {
    const accounts: ZenginAccountSpec[] = [
      {
        accountNumber: '1234567',
        records: Array.from({ length: 1_000 }, (_, i) => ({ date: '2026-11-20', amount: 1_000 + i, name: 'ﾔﾏﾀﾞ ﾀﾛｳ', reference: i + 1 })),
      },
    ];
    const group = zenginFile({ kind: '03', accounts });
    const [header, body, trailer] = [group.subarray(0, 200), group.subarray(200, 200 * 1_001), group.subarray(200 * 1_001, 200 * 1_002)];
    const parser = new ZenginParser(TODAY);
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let records = 0;
    const groups = 262;
    for (let g = 0; g < groups; g++) {
      // Each group a new account's copy of the same 1,000 records: 262 × 1,002 records of 200 bytes ≈ 50 MiB.
      const ownHeader = Buffer.from(header);
      ownHeader.write(String(1_000_000 + g).padStart(10, '0'), 63, 'latin1');
      for (const part of [ownHeader, body, trailer]) records += entries(parser.write(part)).length;
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    const end = Buffer.alloc(200, 0x20);
    end.write(`9${String(groups * 1_002 + 1).padStart(10, '0')}${String(groups).padStart(5, '0')}`, 0, 'latin1');
    parser.write(end);
    parser.end();

    expect(records).toBe(groups * 1_000);
    // Each chunk is let go once read; the file (50 MiB, twice that as text) is never held.
    expect(peak - before).toBeLessThan(32 * 1024 * 1024);
  });
});

describe('camt parser', () => {
  const good = (version: string) =>
    camtFile({
      kind: '054',
      version,
      accounts: [
        {
          accountNumber: '1234567',
          entries: [
            { amount: 1200, date: '2026-11-20', name: 'ヤマダ タロウ', reference: 'A1' },
            { amount: 30, date: '2026-11-21', credit: false, name: '手数料' },
          ],
        },
      ],
    });

  test.each(['02', '04', '06', '07', '08', '10', '13'])(
    'when a camt.054.001.%s file is read in any chunks, then its debtor name is found where that version puts it',
    (version) => {
      fc.assert(
        fc.property(chunking, (chunks) => {
          const parser = new CamtParser(undefined, RECEIVED);
          const read = entries(parse(parser, Buffer.from(good(version)), chunks));
          expect(parser.format).toBe(`camt.054.001.${version}`);
          expect(read.map((e) => [e.direction, e.amount, e.counterparty, e.bankReference])).toEqual([
            ['deposit', 1200, 'ヤマダ タロウ', 'camt:A1'],
            ['withdrawal', 30, '手数料', expect.stringMatching(/^camt:20261121:h[0-9a-f]{16}:30$/)],
          ]);
          expect(Buffer.from(read[0]!.raw).toString('utf8')).toMatch(/^<Ntry>.*<\/Ntry>$/);
        }),
        { numRuns: 20 },
      );
    },
  );

  test.each([
    [
      'an internal DTD with entities (billion laughs)',
      `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><Document>&lol2;</Document>`,
      'DOCTYPE',
    ],
    ['an external entity', `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><Document>&xxe;</Document>`, 'DOCTYPE'],
    ['an undeclared entity', `<Document><BkToCstmrStmt>&xxe;</BkToCstmrStmt></Document>`, 'XML'],
    [
      'elements nested 10,000 deep',
      `<Document><BkToCstmrStmt>${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}</BkToCstmrStmt></Document>`,
      expect.stringMatching(/^Document\/BkToCstmrStmt\/a/),
    ],
    ['a text of 1 MiB', `<Document><BkToCstmrStmt><Stmt><Id>${'x'.repeat(1024 * 1024)}</Id></Stmt></BkToCstmrStmt></Document>`, 'XML'],
    ['another encoding', `<?xml version="1.0" encoding="Shift_JIS"?><Document/>`, 'encoding'],
    ['another root', `<Document><BkToCstmrAcctRpt/></Document>`, 'BkToCstmrAcctRpt'],
    ['a non-JPY amount', good('08').replace('Ccy="JPY">1200', 'Ccy="USD">1200'), 'Ntry/Amt/@Ccy'],
    ['a fraction of a yen', good('08').replace('>1200<', '>1200.5<'), 'Ntry/Amt'],
    ['an impossible booking date', good('08').replace('<BookgDt><Dt>2026-11-20', '<BookgDt><Dt>2026-02-30'), 'Ntry/BookgDt/Dt'],
    ['a truncated file', good('08').slice(0, 700), 'XML'],
  ])('when a camt file has %s, then it is refused naming a field, and nothing is expanded', (_case, xml, field) => {
    expect(outcome(() => new CamtParser(undefined, RECEIVED), Buffer.from(xml, 'utf8'), [1000]).invalid).toMatchObject({ field });
  });

  test('when any characters of a good camt file are changed, cut or added, then the parser gives entries or names a field; it never fails otherwise', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('02', '08', '13'),
        fc.array(
          fc.record({
            at: fc.nat(),
            cut: fc.integer({ min: 0, max: 40 }),
            insert: fc.constantFrom('', '<', '>', '&', '&amp;', '<Ntry>', '</Ntry>', '\u0080', '<!DOCTYPE x>', ']]>', '"', 'ﾞ'),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        chunking,
        (version, mutations, chunks) => {
          let xml = good(version);
          for (const m of mutations) xml = xml.slice(0, m.at % xml.length) + m.insert + xml.slice((m.at % xml.length) + m.cut);
          const result = outcome(() => new CamtParser(undefined, RECEIVED), Buffer.from(xml, 'utf8'), chunks);
          if (result.invalid !== undefined) expect(result.invalid.field).not.toBe('');
          else for (const e of entries(result.items!)) expect(e.amount).toBeGreaterThan(0);
        },
      ),
      { numRuns: 500 },
    );
  });

  const camtOf = (entries: CamtEntrySpec[]) => Buffer.from(camtFile({ kind: '054', version: '08', accounts: [{ accountNumber: '1234567', entries }] }));
  const read = (file: Uint8Array) => entries(parse(new CamtParser(undefined, RECEIVED), file));

  test('when a credit is followed by a DBIT entry marked RvslInd, then the reversal is a withdrawal that cancels the credit, never a deposit', () => {
    const file = camtOf([
      { amount: 5000, date: '2026-11-20', name: 'ﾔﾏﾀﾞ ﾀﾛｳ' },
      { amount: 5000, date: '2026-11-20', name: 'ﾔﾏﾀﾞ ﾀﾛｳ', credit: false, reversal: true },
    ]);

    const [credit, reversal] = read(file);

    expect(credit).toMatchObject({ direction: 'deposit', amount: 5000, counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
    expect(credit!.bankReversal).toBeUndefined();
    expect(reversal).toMatchObject({ direction: 'withdrawal', bankReversal: true, amount: 5000, counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ', cancels: credit!.bankReference });
    expect(reversal!.bankReference).toBe(`${credit!.bankReference}:reversal`);
  });

  test('when a CRDT entry is marked RvslInd (a debit taken back), then it is a deposit the bank marked as a reversal', () => {
    const [entry] = read(camtOf([{ amount: 880, date: '2026-11-20', name: 'ｶ)ﾄﾘﾋｷｻｷ', reversal: true }]));

    expect(entry).toMatchObject({ direction: 'deposit', bankReversal: true, counterparty: 'ｶ)ﾄﾘﾋｷｻｷ' });
    expect(entry!.cancels).toBeUndefined();
  });

  test.each([
    ['a CRDT entry whose details say DBIT', { credit: true, detailIndicator: 'DBIT' as const }],
    ['a DBIT entry whose details say CRDT', { credit: false, detailIndicator: 'CRDT' as const }],
  ])('when %s, then the file is refused at the details indicator', (_case, entry) => {
    const file = Buffer.from(
      camtOf([{ amount: 5000, date: '2026-11-20', name: 'ﾔﾏﾀﾞ ﾀﾛｳ', ...entry }])
        .toString('utf8')
        .replace(/></g, '>\n<'),
    );
    const lineOf = (xml: string, marker: string) => xml.slice(0, xml.indexOf(marker)).split('\n').length;

    const invalid = outcome(() => new CamtParser(undefined, RECEIVED), file).invalid;

    expect(invalid).toMatchObject({ field: 'TxDtls/CdtDbtInd', line: lineOf(file.toString('utf8'), `<CdtDbtInd>${entry.detailIndicator}`) });
  });

  test('when the same entry without a bank reference is written 885 in one file and 885.00000 in another, then both give one reference', () => {
    const whole = read(camtOf([{ amount: 885, date: '2026-11-20', name: 'ｻﾄｳ ﾊﾅｺ' }]));
    const decimals = read(camtOf([{ amount: 885, amountText: '885.00000', date: '2026-11-20', name: 'ｻﾄｳ ﾊﾅｺ' }]));

    expect(decimals[0]!.bankReference).toBe(whole[0]!.bankReference);
    expect(whole[0]!.bankReference).toMatch(/^camt:20261120:h[0-9a-f]{16}:885$/);
  });

  test('when two entries without bank references differ only in the name, then their references differ', () => {
    const [a, b] = read(
      camtOf([
        { amount: 885, date: '2026-11-20', name: 'ｻﾄｳ ﾊﾅｺ' },
        { amount: 885, date: '2026-11-20', name: 'ｻﾄｳ ﾊﾅｴ' },
      ]),
    );

    expect(a!.bankReference).not.toBe(b!.bankReference);
  });

  test('when a booked entry has a value date but no booking date, then the value date is its day', () => {
    const [entry] = read(camtOf([{ amount: 1200, date: '2026-11-19', bookingDate: false, name: 'ﾀﾅｶ ｲﾁﾛｳ', reference: 'V1' }]));

    expect(entry).toMatchObject({ bookingDay: '2026-11-19', bankReference: 'camt:V1' });
  });

  test('when a field of an entry spread over many lines is wrong, then the error names the line of that field, not of the entry end', () => {
    const xml = camtOf([{ amount: 1200, date: '2026-11-20', name: 'ﾀﾅｶ', reference: 'L1' }])
      .toString('utf8')
      .replace(/></g, '>\n<')
      .replace('>1200<', '>12.5<');
    const amountLine = xml.slice(0, xml.indexOf('>12.5<')).split('\n').length;

    const invalid = outcome(() => new CamtParser(undefined, RECEIVED), Buffer.from(xml)).invalid;

    expect(invalid).toMatchObject({ field: 'Ntry/Amt', line: amountLine });
    expect(xml.slice(0, xml.indexOf('</Ntry>')).split('\n').length).toBeGreaterThan(amountLine);
  });

  test('when bytes that are not UTF-8 arrive, then the file is refused as not UTF-8', () => {
    const bytes = Buffer.concat([Buffer.from('<Document><BkToCstmrStmt>'), Buffer.from([0x80, 0xde]), Buffer.from('</BkToCstmrStmt></Document>')]);

    expect(outcome(() => new CamtParser(undefined, RECEIVED), bytes).invalid).toMatchObject({ field: 'encoding' });
  });
});
