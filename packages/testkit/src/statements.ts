import iconv from 'iconv-lite';

/** Test files in the banks' statement formats: Zengin 01/03 (Shift_JIS, 200-byte records) and camt. */

export interface ZenginRecordSpec {
  /** YYYY-MM-DD, written as 和暦 YYMMDD (令和 from 2019-05-01, 平成 before). */
  date: string;
  amount: number;
  /** As the bank writes it (half-width kana); encoded as Shift_JIS. */
  name?: string;
  direction?: 'in' | 'out';
  /** 照会番号; none leaves the field blank. */
  reference?: number;
  remitterCode?: string;
  cancel?: boolean;
  memo?: string;
}

export interface ZenginAccountSpec {
  bankCode?: string;
  branchCode?: string;
  /** 預金種目 code: 1 普通, 2 当座, 4 貯蓄. */
  typeCode?: string;
  accountNumber: string;
  records: ZenginRecordSpec[];
  from?: string;
  to?: string;
}

export interface ZenginFileSpec {
  kind: '01' | '03';
  crlf?: boolean;
  accounts: ZenginAccountSpec[];
  /** Changes a record's bytes after it is laid out (1-based record number), to make a file wrong. */
  tamper?: (line: number, record: Buffer) => void;
}

export function wareki(date: string): string {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const yy = date >= '2019-05-01' ? year - 2018 : year - 1988;
  return [yy, month, day].map((n) => String(n).padStart(2, '0')).join('');
}

/** A record of 200 spaces with fields put at their 1-based byte positions. */
class Layout {
  readonly bytes = Buffer.alloc(200, 0x20);

  put(from: number, value: string | Buffer, width: number): this {
    const bytes = typeof value === 'string' ? iconv.encode(value, 'shift_jis') : value;
    bytes.copy(this.bytes, from - 1, 0, Math.min(width, bytes.length));
    return this;
  }

  digits(from: number, value: number | string, width: number): this {
    return this.put(from, String(value).padStart(width, '0'), width);
  }
}

/** The sums a Zengin trailer states of its account's records. */
interface ZenginTotals {
  credits: number;
  creditSum: number;
  debits: number;
  debitSum: number;
  cancels: number;
  cancelSum: number;
}

function zenginHeader(kind: ZenginFileSpec['kind'], account: ZenginAccountSpec): Buffer {
  const dates = account.records.map((r) => r.date).sort();
  const from = account.from ?? dates[0] ?? '2026-11-20';
  const to = account.to ?? dates.at(-1) ?? from;
  const header = new Layout()
    .put(1, '1', 1)
    .put(2, kind, 2)
    .put(4, '0', 1)
    .put(5, wareki(to), 6)
    .put(11, wareki(from), 6)
    .put(17, wareki(to), 6)
    .put(23, account.bankCode ?? '0001', 4)
    .put(27, 'ﾃｽﾄｷﾞﾝｺｳ', 15)
    .put(42, account.branchCode ?? '001', 3)
    .put(45, 'ﾎﾝﾃﾝ', 15);
  if (kind === '01')
    header
      .put(60, account.typeCode ?? '1', 1)
      .digits(61, account.accountNumber, 7)
      .put(68, 'ｼﾖｳﾃﾝ', 40);
  else
    header
      .put(60, '000', 3)
      .put(63, account.typeCode ?? '1', 1)
      .digits(64, account.accountNumber, 10)
      .put(74, 'ｼﾖｳﾃﾝ', 40)
      .put(114, '1', 1)
      .put(115, '1', 1)
      .digits(116, 0, 14);
  return header.bytes;
}

/** A data record of a 01 file (振込入金通知), counted into `totals`. */
function zengin01Data(r: ZenginRecordSpec, totals: ZenginTotals): Buffer {
  const data = new Layout().put(1, '2', 1);
  if (r.reference !== undefined) data.digits(2, r.reference, 6);
  data.put(8, wareki(r.date), 6).put(14, wareki(r.date), 6).digits(20, r.amount, 10).digits(30, 0, 10);
  if (r.remitterCode !== undefined) data.digits(40, r.remitterCode, 10);
  data
    .put(50, r.name ?? '', 48)
    .put(98, 'ﾐﾂﾋﾞｼUFJ', 15)
    .put(113, 'ﾎﾝﾃﾝ', 15)
    .put(128, r.cancel ? '1' : '0', 1);
  totals.credits += 1;
  totals.creditSum += r.amount;
  if (r.cancel) {
    totals.cancels += 1;
    totals.cancelSum += r.amount;
  }
  return data.bytes;
}

/** A data record of a 03 file (入出金取引明細), counted into `totals`. */
function zengin03Data(r: ZenginRecordSpec, totals: ZenginTotals): Buffer {
  const data = new Layout().put(1, '2', 1);
  const out = r.direction === 'out';
  if (r.reference !== undefined) data.digits(2, r.reference, 8);
  data
    .put(10, wareki(r.date), 6)
    .put(16, wareki(r.date), 6)
    .put(22, out ? '2' : '1', 1)
    .put(23, '11', 2)
    .digits(25, r.amount, 12)
    .digits(37, 0, 12);
  if (r.remitterCode !== undefined) data.digits(72, r.remitterCode, 10);
  data.put(82, r.name ?? '', 48).put(160, r.memo ?? '', 20);
  if (out) {
    totals.debits += 1;
    totals.debitSum += r.amount;
  } else {
    totals.credits += 1;
    totals.creditSum += r.amount;
  }
  return data.bytes;
}

function zenginTrailer(kind: ZenginFileSpec['kind'], records: number, t: ZenginTotals): Buffer {
  const trailer = new Layout().put(1, '8', 1);
  if (kind === '01') trailer.digits(2, t.credits, 6).digits(8, t.creditSum, 12).digits(20, t.cancels, 6).digits(26, t.cancelSum, 12);
  else
    trailer
      .digits(2, t.credits, 6)
      .digits(8, t.creditSum, 13)
      .digits(21, t.debits, 6)
      .digits(27, t.debitSum, 13)
      .put(40, '1', 1)
      .digits(41, t.creditSum - t.debitSum, 14)
      .digits(55, records, 7);
  return trailer.bytes;
}

/** A Zengin 01 or 03 file: per account a header, its data records and a trailer, then the end record. */
export function zenginFile(spec: ZenginFileSpec): Buffer {
  const records: Buffer[] = [];
  for (const account of spec.accounts) {
    records.push(zenginHeader(spec.kind, account));
    const totals: ZenginTotals = { credits: 0, creditSum: 0, debits: 0, debitSum: 0, cancels: 0, cancelSum: 0 };
    for (const r of account.records) records.push(spec.kind === '01' ? zengin01Data(r, totals) : zengin03Data(r, totals));
    records.push(zenginTrailer(spec.kind, account.records.length, totals));
  }
  const end = new Layout().put(1, '9', 1);
  if (spec.kind === '03') end.digits(2, records.length + 1, 10).digits(12, spec.accounts.length, 5);
  records.push(end.bytes);
  records.forEach((record, i) => spec.tamper?.(i + 1, record));
  return Buffer.concat(records.flatMap((record) => (spec.crlf ? [record, Buffer.from('\r\n')] : [record])));
}

export interface CamtEntrySpec {
  amount: number;
  /** How `Amt` is written, when not as `amount` (`885.00000`). */
  amountText?: string;
  credit?: boolean;
  /** `RvslInd` true: the entry reverses an earlier one (its indicator still states its own direction). */
  reversal?: boolean;
  /** A `CdtDbtInd` in the entry's details, when given. */
  detailIndicator?: 'CRDT' | 'DBIT';
  /** YYYY-MM-DD. */
  date: string;
  /** False: the entry has a value date only, no booking date. */
  bookingDate?: false;
  name?: string;
  reference?: string;
  status?: string;
}

/** A camt.054 (or .053) document of one version, debtor names where that version puts them. */
export function camtFile(spec: {
  kind: '054' | '053';
  version: string;
  accounts: { bankCode?: string; branchCode?: string; accountNumber: string; entries: CamtEntrySpec[] }[];
  doctype?: string;
}): string {
  const party = Number(spec.version) >= 7 ? (name: string) => `<Pty><Nm>${name}</Nm></Pty>` : (name: string) => `<Nm>${name}</Nm>`;
  const status = (code: string) => (Number(spec.version) >= 7 ? `<Sts><Cd>${code}</Cd></Sts>` : `<Sts>${code}</Sts>`);
  const [root, report] = spec.kind === '054' ? ['BkToCstmrDbtCdtNtfctn', 'Ntfctn'] : ['BkToCstmrStmt', 'Stmt'];
  const reports = spec.accounts.map((account, a) => {
    const entries = account.entries.map((e) => {
      const indicator = e.credit === false ? 'DBIT' : 'CRDT';
      // A reversal names the parties of the entry it reverses: a reversed credit, its debtor.
      const partyTag = (e.credit === false) !== (e.reversal === true) ? 'Cdtr' : 'Dbtr';
      return (
        `<Ntry><Amt Ccy="JPY">${e.amountText ?? e.amount}</Amt><CdtDbtInd>${indicator}</CdtDbtInd>` +
        `${e.reversal === true ? '<RvslInd>true</RvslInd>' : ''}${status(e.status ?? 'BOOK')}` +
        `${e.bookingDate === false ? '' : `<BookgDt><Dt>${e.date}</Dt></BookgDt>`}<ValDt><Dt>${e.date}</Dt></ValDt>` +
        `${e.reference === undefined ? '' : `<AcctSvcrRef>${e.reference}</AcctSvcrRef>`}` +
        `<NtryDtls><TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs>` +
        `${e.detailIndicator === undefined ? '' : `<CdtDbtInd>${e.detailIndicator}</CdtDbtInd>`}` +
        `${e.name === undefined ? '' : `<RltdPties><${partyTag}>${party(e.name)}</${partyTag}></RltdPties>`}</TxDtls></NtryDtls></Ntry>`
      );
    });
    return (
      `<${report}><Id>R${a + 1}</Id><CreDtTm>2026-11-27T10:00:00+09:00</CreDtTm>` +
      `<Acct><Id><Othr><Id>${account.accountNumber}</Id></Othr></Id><Ccy>JPY</Ccy>` +
      `<Svcr><FinInstnId><ClrSysMmbId><ClrSysId><Cd>JPZGN</Cd></ClrSysId><MmbId>${account.bankCode ?? '0001'}${account.branchCode ?? '001'}</MmbId></ClrSysMmbId></FinInstnId></Svcr></Acct>` +
      `${entries.join('')}</${report}>`
    );
  });
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n${spec.doctype ?? ''}<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.${spec.kind}.001.${spec.version}">` +
    `<${root}><GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-11-27T10:00:00+09:00</CreDtTm></GrpHdr>${reports.join('')}</${root}></Document>\n`
  );
}
