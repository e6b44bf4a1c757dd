import iconv from 'iconv-lite';
import { StatementInvalid } from './statement';
import { warekiDate } from './wareki';

/** A field of a fixed-length record: its name as the Zengin layouts write it, bytes 1-based inclusive. */
export interface Field {
  name: string;
  from: number;
  to: number;
}

export const field = (name: string, from: number, to: number): Field => ({ name, from, to });

const SPACE = 0x20;
const ZERO = 0x30;
const NINE = 0x39;

/** One 200-byte record and its number in the file, read field by field from its bytes. */
export class ZenginRecord {
  constructor(
    readonly bytes: Uint8Array,
    readonly line: number,
  ) {}

  private slice(f: Field): Uint8Array {
    return this.bytes.subarray(f.from - 1, f.to);
  }

  fail(f: Field, message: string): never {
    throw new StatementInvalid(this.line, f.name, `record ${this.line}, ${f.name} (bytes ${f.from}-${f.to}): ${message}`);
  }

  /** N: digits only. */
  digits(f: Field): string {
    const bytes = this.slice(f);
    for (const b of bytes) if (b < ZERO || b > NINE) this.fail(f, 'must be digits');
    return String.fromCharCode(...bytes);
  }

  /** An optional N field: undefined when it is all spaces or all zeros (not set). */
  optionalDigits(f: Field): string | undefined {
    const bytes = this.slice(f);
    if (bytes.every((b) => b === SPACE)) return undefined;
    const text = this.digits(f);
    return /^0+$/.test(text) ? undefined : text;
  }

  number(f: Field): number {
    return Number(this.digits(f));
  }

  /** An optional amount or count: 0 when not set. */
  optionalNumber(f: Field): number | undefined {
    const bytes = this.slice(f);
    if (bytes.every((b) => b === SPACE)) return undefined;
    return Number(this.digits(f));
  }

  /**
   * C: single-byte text (JIS X 0201 as Shift_JIS), decoded from this field's bytes alone, so a
   * stray byte can never shift the fields after it; trimmed on the right. A byte outside the
   * permitted set is taken as it decodes; control characters become U+FFFD.
   */
  text(f: Field): string {
    const decoded = iconv.decode(Buffer.from(this.slice(f)), 'shift_jis');
    return decoded.replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd').replace(/ +$/, '');
  }

  /** A 和暦 YYMMDD date as YYYY-MM-DD; `today` tells 令和 from 平成. */
  date(f: Field, today: string): string {
    const text = this.digits(f);
    const date = warekiDate(text, today);
    if (date === undefined) this.fail(f, `${text} is not a date of 令和 or 平成`);
    return date;
  }

  /** An optional date: undefined when all spaces or zeros. */
  optionalDate(f: Field, today: string): string | undefined {
    return this.optionalDigits(f) === undefined ? undefined : this.date(f, today);
  }

  byte(position: number): number {
    return this.bytes[position - 1]!;
  }
}
