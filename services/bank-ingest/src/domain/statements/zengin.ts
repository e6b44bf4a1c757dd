import type { AccountType } from '@pmatch/contracts';
import { field, ZenginRecord } from './zengin-fields';
import { RepeatCounter, zenginReference } from './references';
import { StatementInvalid, type StatementItem, type StatementParser } from './statement';

/**
 * Zengin 振込入金通知 (種別 01, format A and B) and 入出金取引明細 (種別 03): fixed 200-byte
 * records, with or without CRLF after each, one or more header-data-trailer groups (one per
 * account) and one end record. Every check that can fail a file is made as the record is read, the
 * group and file totals at the trailer and end records. Layouts and what was assumed where the
 * sources are silent: docs/bank-formats.md.
 */

export const RECORD_BYTES = 200;
const CR = 0x0d;
const LF = 0x0a;

const F = {
  recordType: field('データ区分', 1, 1),
  kind: field('種別コード', 2, 3),
  codeSet: field('コード区分', 4, 4),
  created: field('作成日', 5, 10),
  from: field('勘定日(自)', 11, 16),
  to: field('勘定日(至)', 17, 22),
  bank: field('銀行コード', 23, 26),
  branch: field('支店コード', 42, 44),
};
const H01 = { type: field('預金種目', 60, 60), number: field('口座番号', 61, 67) };
const H03 = { type: field('預金種目', 63, 63), number: field('口座番号', 64, 73) };
const D01 = {
  reference: field('照会番号', 2, 7),
  booked: field('勘定日', 8, 13),
  value: field('起算日', 14, 19),
  amount: field('金額', 20, 29),
  remitterCode: field('振込依頼人コード', 40, 49),
  remitter: field('振込依頼人名', 50, 97),
  cancel: field('取消区分', 128, 128),
  amountB: field('金額(2)', 129, 140),
  otherB: field('うち他店券金額(2)', 141, 152),
  formatB: field('金額(2)・うち他店券金額(2)', 129, 152),
};
const T01 = {
  count: field('振込合計件数', 2, 7),
  sum: field('振込合計金額', 8, 19),
  cancelCount: field('取消合計件数', 20, 25),
  cancelSum: field('取消合計金額', 26, 37),
};
const D03 = {
  reference: field('照会番号', 2, 9),
  booked: field('勘定日', 10, 15),
  value: field('預入・払出日', 16, 21),
  direction: field('入払区分', 22, 22),
  amount: field('取引金額', 25, 36),
  remitterCode: field('振込依頼人コード', 72, 81),
  remitter: field('振込依頼人名', 82, 129),
  memo: field('摘要内容', 160, 179),
};
const T03 = {
  creditCount: field('入金件数', 2, 7),
  creditSum: field('入金額合計', 8, 20),
  debitCount: field('出金件数', 21, 26),
  debitSum: field('出金額合計', 27, 39),
  dataCount: field('データ・レコード件数', 55, 61),
};
const E03 = { total: field('レコード総件数', 2, 11), accounts: field('口座数', 12, 16) };

/** 預金種目 of the accounts we hold: 普通, 当座, 貯蓄. */
const ACCOUNT_TYPE_OF_CODE: Record<string, AccountType> = { '1': 'ordinary', '2': 'current', '4': 'savings' };

interface GroupTotals {
  data: number;
  credits: number;
  creditSum: number;
  debits: number;
  debitSum: number;
}

export class ZenginParser implements StatementParser {
  format = 'zengin';
  private pending: Buffer = Buffer.alloc(0);
  private crlf: boolean | undefined;
  private line = 0;
  private state: 'header' | 'data' | 'between' | 'done' = 'header';
  private kind: '01' | '03' | undefined;
  private accounts = 0;
  private group: GroupTotals = emptyTotals();
  private readonly repeats = new RepeatCounter();

  /** `today` (YYYY-MM-DD in Tokyo) tells 令和 dates from 平成 ones. */
  constructor(private readonly today: string) {}

  write(chunk: Uint8Array): StatementItem[] {
    this.pending = this.pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.pending, chunk]);
    const items: StatementItem[] = [];
    for (;;) {
      if (this.crlf === undefined) {
        if (this.pending.length < RECORD_BYTES + 2) return items;
        this.crlf = this.framingOf(this.pending);
      }
      const stride = this.crlf ? RECORD_BYTES + 2 : RECORD_BYTES;
      if (this.pending.length < stride) return items;
      items.push(...this.record(this.pending.subarray(0, stride)));
      this.pending = this.pending.subarray(stride);
    }
  }

  end(): StatementItem[] {
    const items: StatementItem[] = [];
    if (this.crlf === undefined && this.pending.length > 0) {
      if (this.pending.length < RECORD_BYTES) this.tooShort();
      this.crlf = this.framingOf(this.pending);
    }
    if (this.pending.length > 0) {
      // The last record may come without its CRLF.
      if (this.pending.length !== RECORD_BYTES) this.tooShort();
      items.push(...this.record(this.pending));
      this.pending = Buffer.alloc(0);
    }
    if (this.state !== 'done') {
      throw new StatementInvalid(
        this.line + 1,
        'データ区分',
        `the file ends after record ${this.line} without its ${this.state === 'data' ? 'trailer and ' : ''}end record`,
      );
    }
    return items;
  }

  private framingOf(bytes: Buffer): boolean {
    const [first, second] = [bytes[RECORD_BYTES], bytes[RECORD_BYTES + 1]];
    if (first === CR && second === LF) return true;
    if (first === CR || first === LF) throw new StatementInvalid(1, 'record separator', 'records must be separated by CRLF or by nothing (not CR or LF alone)');
    return false;
  }

  private tooShort(): never {
    throw new StatementInvalid(this.line + 1, 'record length', `record ${this.line + 1} is ${this.pending.length} bytes; every record is ${RECORD_BYTES}`);
  }

  private record(bytes: Uint8Array): StatementItem[] {
    this.line += 1;
    if (this.state === 'done') throw new StatementInvalid(this.line, 'データ区分', `record ${this.line} follows the end record`);
    if (this.crlf && bytes.length === RECORD_BYTES + 2 && (bytes[RECORD_BYTES] !== CR || bytes[RECORD_BYTES + 1] !== LF)) {
      throw new StatementInvalid(this.line, 'record length', `record ${this.line} is not ${RECORD_BYTES} bytes followed by CRLF`);
    }
    const record = new ZenginRecord(bytes.subarray(0, RECORD_BYTES), this.line);
    const type = record.digits(F.recordType);
    const expected = { header: ['1'], data: ['2', '8'], between: ['1', '9'] }[this.state];
    if (!expected.includes(type))
      record.fail(F.recordType, `is ${type}; expected ${expected.join(' or ')} here (order: header 1, data 2…, trailer 8, for each account, then end 9)`);
    if (type === '1') return [this.header(record)];
    if (type === '2') return [this.data(record)];
    if (type === '8') this.trailer(record);
    else this.endRecord(record);
    return [];
  }

  private header(record: ZenginRecord): StatementItem {
    const kind = record.digits(F.kind);
    if (kind !== '01' && kind !== '03') record.fail(F.kind, `is ${kind}; only 01 (振込入金通知) and 03 (入出金取引明細) are imported`);
    if (this.kind !== undefined && kind !== this.kind) record.fail(F.kind, `is ${kind}, but the file began with ${this.kind}`);
    this.kind = kind;
    if (record.digits(F.codeSet) !== '0') record.fail(F.codeSet, 'must be 0 (JIS); EBCDIC files are not read');
    record.optionalDate(F.created, this.today);
    const from = record.date(F.from, this.today);
    const to = record.date(F.to, this.today);
    if (to < from) record.fail(F.to, `${to} is before 勘定日(自) ${from}`);
    const layout = kind === '01' ? H01 : H03;
    const typeCode = record.digits(layout.type);
    const accountType = ACCOUNT_TYPE_OF_CODE[typeCode];
    if (accountType === undefined) record.fail(layout.type, `is ${typeCode}; only 1 (普通), 2 (当座) and 4 (貯蓄) accounts are imported`);
    const number = record.digits(layout.number);
    if (!/^0*$/.test(number.slice(0, -7))) record.fail(layout.number, `${number} does not fit the 7 digits of an account number`);
    this.accounts += 1;
    this.group = emptyTotals();
    this.repeats.nextGroup();
    this.state = 'data';
    return {
      kind: 'account',
      line: record.line,
      account: { bankCode: record.digits(F.bank), branchCode: record.digits(F.branch), accountType, accountNumber: number.slice(-7) },
    };
  }

  private data(record: ZenginRecord): StatementItem {
    return { kind: 'entry', entry: this.kind === '01' ? this.transfer(record) : this.movement(record) };
  }

  /** 01: a transfer received (or the cancellation of one). */
  private transfer(record: ZenginRecord) {
    const booked = record.date(D01.booked, this.today);
    const value = record.optionalDate(D01.value, this.today);
    // Format B moves the amount to bytes 129-140; A has 取消区分 at 128 and EDI text after it.
    const formatB = /^[0-9]{24}$/.test(Buffer.from(record.bytes.subarray(128, 152)).toString('latin1'));
    const amount = formatB && record.number(D01.amount) === 0 ? record.number(D01.amountB) : record.number(D01.amount);
    if (amount <= 0) record.fail(formatB ? D01.amountB : D01.amount, 'must be more than 0');
    const cancelFlag = record.byte(D01.cancel.from);
    if (cancelFlag !== 0x20 && cancelFlag !== 0x30 && cancelFlag !== 0x31) record.fail(D01.cancel, 'must be 1 (取消), 0 or a space');
    const cancel = cancelFlag === 0x31;
    this.group.data += 1;
    this.group.credits += 1;
    this.group.creditSum += amount;
    if (cancel) {
      this.group.debits += 1;
      this.group.debitSum += amount;
    }
    const reference = record.optionalDigits(D01.reference);
    const day = value !== undefined && value < booked ? value : booked;
    const base = zenginReference({ booked, reference, amount, raw: record.bytes, direction: cancel ? 'cancel' : 'deposit' });
    const remitterCode = record.optionalDigits(D01.remitterCode);
    return {
      line: record.line,
      account: this.accounts - 1,
      direction: cancel ? ('withdrawal' as const) : ('deposit' as const),
      ...(cancel ? { cancels: zenginReference({ booked, reference, amount, raw: record.bytes, direction: 'deposit' }), bankReversal: true as const } : {}),
      ...(remitterCode === undefined ? {} : { remitterCode }),
      amount,
      counterparty: withoutRemitterCode(record.text(D01.remitter), remitterCode),
      bookingDay: day,
      bankReference: this.repeats.unique(base),
      raw: Uint8Array.from(record.bytes),
    };
  }

  /** 03: money in or out of the account. */
  private movement(record: ZenginRecord) {
    const booked = record.date(D03.booked, this.today);
    const value = record.optionalDate(D03.value, this.today);
    const direction = record.digits(D03.direction);
    if (direction !== '1' && direction !== '2') record.fail(D03.direction, 'must be 1 (入金) or 2 (出金)');
    const amount = record.number(D03.amount);
    if (amount <= 0) record.fail(D03.amount, 'must be more than 0');
    const deposit = direction === '1';
    this.group.data += 1;
    if (deposit) {
      this.group.credits += 1;
      this.group.creditSum += amount;
    } else {
      this.group.debits += 1;
      this.group.debitSum += amount;
    }
    const reference = record.optionalDigits(D03.reference);
    const base = zenginReference({ booked, reference, amount, raw: record.bytes, direction: deposit ? 'deposit' : 'withdrawal' });
    const remitterCode = record.optionalDigits(D03.remitterCode);
    const name = withoutRemitterCode(record.text(D03.remitter), remitterCode);
    return {
      line: record.line,
      account: this.accounts - 1,
      direction: deposit ? ('deposit' as const) : ('withdrawal' as const),
      ...(remitterCode === undefined ? {} : { remitterCode }),
      amount,
      counterparty: name === '' ? record.text(D03.memo) : name,
      bookingDay: value !== undefined && value < booked ? value : booked,
      bankReference: this.repeats.unique(base),
      raw: Uint8Array.from(record.bytes),
    };
  }

  private trailer(record: ZenginRecord): void {
    const g = this.group;
    if (this.kind === '01') {
      // Whether 振込合計 counts the cancellations is not settled: either reading is taken.
      const count = record.number(T01.count);
      const sum = record.number(T01.sum);
      const readings = [
        [g.credits, g.creditSum],
        [g.credits - g.debits, g.creditSum - g.debitSum],
      ];
      if (!readings.some(([c]) => c === count))
        record.fail(T01.count, `is ${count}; the group has ${g.credits} data records (${g.debits} of them cancellations)`);
      if (!readings.some(([c, s]) => c === count && s === sum)) {
        record.fail(T01.sum, `is ${sum}; the group's amounts add up to ${g.creditSum} (${g.creditSum - g.debitSum} without cancellations)`);
      }
      const cancelCount = record.optionalNumber(T01.cancelCount);
      const cancelSum = record.optionalNumber(T01.cancelSum);
      if (cancelCount !== undefined && cancelCount !== 0 && cancelCount !== g.debits)
        record.fail(T01.cancelCount, `is ${cancelCount}; the group has ${g.debits} cancellations`);
      if (cancelSum !== undefined && cancelSum !== 0 && cancelSum !== g.debitSum)
        record.fail(T01.cancelSum, `is ${cancelSum}; the group's cancellations add up to ${g.debitSum}`);
    } else {
      const checks: [typeof T03.creditCount, number][] = [
        [T03.creditCount, g.credits],
        [T03.creditSum, g.creditSum],
        [T03.debitCount, g.debits],
        [T03.debitSum, g.debitSum],
        [T03.dataCount, g.data],
      ];
      for (const [f, actual] of checks) {
        const given = record.number(f);
        if (given !== actual) record.fail(f, `is ${given}; the group's data records give ${actual}`);
      }
    }
    this.state = 'between';
  }

  private endRecord(record: ZenginRecord): void {
    if (this.kind === '03') {
      const accounts = record.number(E03.accounts);
      if (accounts !== this.accounts) record.fail(E03.accounts, `is ${accounts}; the file has ${this.accounts} accounts`);
      // Whether レコード総件数 counts the end record itself is read both ways.
      const total = record.number(E03.total);
      if (total !== this.line && total !== this.line - 1) record.fail(E03.total, `is ${total}; the file has ${this.line} records`);
    }
    this.state = 'done';
  }
}

function emptyTotals(): GroupTotals {
  return { data: 0, credits: 0, creditSum: 0, debits: 0, debitSum: 0 };
}

/** A remitter code the bank also put in front of the name (digits and a space) is not part of the name. */
function withoutRemitterCode(name: string, code: string | undefined): string {
  if (code === undefined) return name;
  const match = /^([0-9]{1,10}) +/.exec(name);
  return match !== null && Number(match[1]) === Number(code) ? name.slice(match[0].length) : name;
}
