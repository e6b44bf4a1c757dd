import { SaxesParser } from 'saxes';
import { RepeatCounter, camtValuesHash, referenceWithSuffix } from './references';
import { StatementInvalid, type StatementItem, type StatementParser } from './statement';
import { DETAIL_PATHS, ENTRY_PATHS, REPORT_PATHS, bookingOf, camtAccount, camtAmount, counterpartyOf, creditIndicator, type Fail } from './camt-fields';

/**
 * ISO 20022 camt.054 (BkToCstmrDbtCdtNtfctn/Ntfctn) and camt.053 (BkToCstmrStmt/Stmt), any
 * version: elements are matched by local name, the namespace only names the version. Streamed
 * through saxes, which never reads a DTD or expands an entity of one; a DOCTYPE is refused
 * outright (docs/decisions/0037-statement-parsing.md). Depth, text runs and entries are bounded,
 * so memory is too. What was assumed where the sources are silent: docs/bank-formats.md.
 */

const MAX_DEPTH = 32;
/** Longest run of characters without a '<' (a text node, an attribute): camt has none near it. */
const MAX_RUN = 64 * 1024;
/** Largest entry kept as the raw record. */
const MAX_ENTRY_CHARS = 256 * 1024;
const MAX_TEXT = 4 * 1024;

const ROOTS: Record<string, { report: string; kind: 'camt.054' | 'camt.053' }> = {
  BkToCstmrDbtCdtNtfctn: { report: 'Ntfctn', kind: 'camt.054' },
  BkToCstmrStmt: { report: 'Stmt', kind: 'camt.053' },
};

interface Scope {
  depth: number;
  texts: Map<string, string>;
  /** The line each kept text ends on, by the same path: where a refusal of that field points. */
  lines: Map<string, number>;
  currency?: Map<string, string>;
  /** The line the scope's element starts on. */
  line: number;
}

/** A scope of its depth, nothing read in it yet. */
const scopeAt = (depth: number, line: number, withCurrency: boolean): Scope => ({
  depth,
  texts: new Map(),
  lines: new Map(),
  ...(withCurrency ? { currency: new Map<string, string>() } : {}),
  line,
});

export class CamtParser implements StatementParser {
  format = 'camt';
  private readonly sax = new SaxesParser({ position: true });
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private readonly path: string[] = [];
  private items: StatementItem[] = [];
  private root: (typeof ROOTS)[string] | undefined;
  private report: Scope | undefined;
  private account: { index: number } | undefined;
  private accounts = 0;
  private entry: (Scope & { start: number; details: Scope[] }) | undefined;
  private detail: Scope | undefined;
  private totals = { credits: 0, creditSum: 0, debits: 0, debitSum: 0 };
  private text = '';
  /** The decoded text not yet passed over: from the open entry's start, else the chunk being read. */
  private kept = '';
  private keptFrom = 0;
  private consumed = 0;
  private version: string | undefined;
  private run = 0;
  private readonly repeats = new RepeatCounter();

  constructor(
    private readonly expected: 'camt.054' | 'camt.053' | undefined,
    private readonly receivedAt: Date,
  ) {
    this.sax.on('error', (error) => this.fail('XML', `not well-formed XML: ${error.message}`));
    this.sax.on('doctype', () => this.fail('DOCTYPE', 'a DOCTYPE is not allowed: DTDs and entities are never read'));
    this.sax.on('xmldecl', (decl) => {
      if (decl.encoding !== undefined && !/^utf-?8$/i.test(decl.encoding)) this.fail('encoding', `is ${decl.encoding}; only UTF-8 is read`);
    });
    this.sax.on('opentagstart', (tag) => this.open(tag.name));
    this.sax.on('attribute', (attribute) => {
      if (localName(attribute.name) === 'Ccy') this.currencyOf(attribute.value);
      if (attribute.name === 'xmlns' || attribute.name.startsWith('xmlns:')) {
        this.version ??= /camt\.05[34]\.001\.([0-9]{2})$/.exec(attribute.value)?.[1];
      }
    });
    this.sax.on('text', (text) => {
      this.text += text;
    });
    this.sax.on('cdata', (text) => {
      this.text += text;
    });
    this.sax.on('closetag', () => this.close());
  }

  write(chunk: Uint8Array): StatementItem[] {
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      this.fail('encoding', 'the file is not valid UTF-8');
    }
    this.feed(text);
    return this.take();
  }

  end(): StatementItem[] {
    let rest: string;
    try {
      rest = this.decoder.decode();
    } catch {
      this.fail('encoding', 'the file is not valid UTF-8');
    }
    this.feed(rest);
    this.sax.close();
    if (this.root === undefined) this.fail('Document', 'no camt.053 or camt.054 document found');
    return this.take();
  }

  private feed(text: string): void {
    const lastTag = text.lastIndexOf('<');
    this.run = lastTag === -1 ? this.run + text.length : text.length - lastTag - 1;
    if (lastTag === -1 && this.run > MAX_RUN) this.fail('XML', `more than ${MAX_RUN} characters without a tag`);
    this.kept += text;
    this.consumed += text.length;
    if (this.entry !== undefined && this.consumed - this.entry.start > MAX_ENTRY_CHARS)
      this.fail('Ntry', `an entry is longer than ${MAX_ENTRY_CHARS} characters`);
    this.sax.write(text);
    // Outside entries only the text from the last '<' on is kept: an entry's start tag may begin there.
    if (this.entry === undefined) {
      const lastOpen = this.kept.lastIndexOf('<');
      this.passOver(lastOpen === -1 ? this.consumed : this.keptFrom + lastOpen);
    }
  }

  /** Forgets the text before `position`. */
  private passOver(position: number): void {
    this.kept = this.kept.slice(position - this.keptFrom);
    this.keptFrom = position;
  }

  private take(): StatementItem[] {
    const items = this.items;
    this.items = [];
    return items;
  }

  private fail(field: string, message: string, line = this.sax.line): never {
    throw new StatementInvalid(Math.max(1, line), field, `line ${line}, ${field}: ${message}`);
  }

  /**
   * How fields of a scope are refused: at the line of the field named (its path after `prefix`,
   * an attribute's element), else at the line the scope starts on (a field that is missing).
   */
  private failIn(scope: Scope, prefix: string): Fail {
    return (field, message) => {
      const path = (field.startsWith(prefix) ? field.slice(prefix.length) : field).replace(/\/@\w+$/, '');
      return this.fail(field, message, scope.lines.get(path) ?? scope.line);
    };
  }

  private open(name: string): void {
    const local = localName(name);
    this.path.push(local);
    this.text = '';
    if (this.path.length > MAX_DEPTH) this.fail(this.path.join('/'), `elements nest more than ${MAX_DEPTH} deep`);
    const depth = this.path.length;
    if (depth === 1 && local !== 'Document') this.fail(local, 'the root element must be Document');
    if (depth === 2) this.openRoot(local);
    if (depth === 3 && this.root !== undefined && local === this.root.report) this.openReport();
    if (this.report !== undefined && depth === this.report.depth + 1 && local === 'Ntry') this.openEntry();
    if (this.entry !== undefined && depth === this.entry.depth + 2 && local === 'TxDtls' && this.path.at(-2) === 'NtryDtls') {
      this.detail = scopeAt(depth, this.sax.line, true);
    }
  }

  private openRoot(local: string): void {
    const root = ROOTS[local];
    if (root === undefined) this.fail(local, 'is neither BkToCstmrDbtCdtNtfctn (camt.054) nor BkToCstmrStmt (camt.053)');
    if (this.expected !== undefined && this.expected !== root.kind) this.fail(local, `is a ${root.kind} document; ${this.expected} was asked for`);
    this.root = root;
    this.format = this.version === undefined ? root.kind : `${root.kind}.001.${this.version}`;
  }

  private openReport(): void {
    this.report = scopeAt(this.path.length, this.sax.line, false);
    this.account = undefined;
    this.totals = { credits: 0, creditSum: 0, debits: 0, debitSum: 0 };
    this.repeats.nextGroup();
  }

  private openEntry(): void {
    this.announceAccount();
    // The entry's start tag begins at the last '<' before where saxes is (it has read the name, and maybe one more character).
    const at = this.keptFrom + this.kept.lastIndexOf('<', this.sax.position - 1 - this.keptFrom);
    this.passOver(at);
    this.entry = { ...scopeAt(this.path.length, this.sax.line, true), start: at, details: [] };
  }

  private currencyOf(value: string): void {
    const scope = this.detail ?? this.entry;
    if (scope === undefined) return;
    scope.currency!.set(this.relative(scope, this.path.length), value);
  }

  private relative(scope: Scope, depth: number): string {
    return this.path.slice(scope.depth, depth).join('/');
  }

  private close(): void {
    const depth = this.path.length;
    const text = this.text.trim();
    this.text = '';
    const scope = this.detail ?? this.entry ?? this.report;
    if (scope !== undefined && depth > scope.depth) {
      const path = this.relative(scope, depth);
      const wanted = scope === this.detail ? DETAIL_PATHS : scope === this.entry ? ENTRY_PATHS : REPORT_PATHS;
      if (wanted.has(path)) {
        if (text.length > MAX_TEXT) this.fail(path, `is longer than ${MAX_TEXT} characters`);
        scope.texts.set(path, text);
        scope.lines.set(path, this.sax.line);
      }
    }
    if (this.detail !== undefined && depth === this.detail.depth) {
      this.entry!.details.push(this.detail);
      this.detail = undefined;
    } else if (this.entry !== undefined && depth === this.entry.depth) {
      this.closeEntry();
    } else if (this.report !== undefined && depth === this.report.depth) {
      this.closeReport();
    }
    this.path.pop();
  }

  private announceAccount(): void {
    if (this.account !== undefined) return;
    const account = camtAccount(this.report!.texts, this.failIn(this.report!, ''));
    this.account = { index: this.accounts };
    this.accounts += 1;
    this.items.push({ kind: 'account', line: this.report!.line, account });
  }

  private closeEntry(): void {
    const entry = this.entry!;
    const raw = Buffer.from(this.kept.slice(entry.start - this.keptFrom, this.sax.position - this.keptFrom), 'utf8');
    this.entry = undefined;
    this.passOver(this.sax.position);
    const t = entry.texts;
    const fail = this.failIn(entry, 'Ntry/');
    const amount = camtAmount(fail, t.get('Amt'), entry.currency!.get('Amt'), 'Ntry/Amt');
    // The indicator states the entry's own direction, a reversal's too (ISO 20022: RvslInd only marks it as one).
    const credit = creditIndicator(fail, t.get('CdtDbtInd'), 'Ntry/CdtDbtInd');
    if (credit) {
      this.totals.credits += 1;
      this.totals.creditSum += amount;
    } else {
      this.totals.debits += 1;
      this.totals.debitSum += amount;
    }
    const status = (t.get('Sts/Cd') ?? t.get('Sts') ?? 'BOOK').toUpperCase();
    if (status !== 'BOOK') return;
    const reversal = t.get('RvslInd') === 'true';
    const { day, at } = bookingOf(t, this.receivedAt, fail);
    const details = entry.details.length > 0 ? entry.details : [scopeAt(0, entry.line, true)];
    const amounts = details.map((d) => this.detailAmount(d, details.length, amount));
    if (amounts.reduce((a, b) => a + b, 0) !== amount) {
      fail('NtryDtls/TxDtls/Amt', `the details add up to ${amounts.reduce((a, b) => a + b, 0)}, not the entry's ${amount}`);
    }
    // A reversal names the parties of the entry it takes back: a reversed credit, its debtor.
    const reversedCredit = credit !== reversal;
    details.forEach((d, i) => {
      if (d.texts.has('CdtDbtInd') && creditIndicator(this.failIn(d, 'TxDtls/'), d.texts.get('CdtDbtInd'), 'TxDtls/CdtDbtInd') !== credit) {
        this.fail('TxDtls/CdtDbtInd', `is ${d.texts.get('CdtDbtInd')}, against its entry's ${credit ? 'CRDT' : 'DBIT'}`, d.lines.get('CdtDbtInd'));
      }
      const suffix = details.length > 1 ? `/${i + 1}` : '';
      const counterparty = counterpartyOf(d.texts, reversedCredit) ?? (t.get('AddtlNtryInf') ?? '').replace(/\s+/g, ' ').slice(0, 140);
      const given = d.texts.get('Refs/AcctSvcrRef') ?? d.texts.get('Refs/UETR') ?? referenceWithSuffix(t.get('AcctSvcrRef') ?? t.get('NtryRef'), suffix);
      // Without the bank's own id, the entry is named by what it says, never by how its XML is written.
      const base = given ?? `${day.replace(/-/g, '')}:h${camtValuesHash(reversedCredit, day, amounts[i]!, counterparty)}${suffix}:${amounts[i]}`;
      this.items.push({
        kind: 'entry',
        entry: {
          line: d.line,
          account: this.account!.index,
          direction: credit ? 'deposit' : 'withdrawal',
          ...(reversal ? { bankReversal: true as const } : {}),
          ...(reversal && !credit ? { cancels: `camt:${base}` } : {}),
          amount: amounts[i]!,
          counterparty,
          bookingDay: day,
          ...(at === undefined ? {} : { bookedAt: at }),
          bankReference: this.repeats.unique(`camt:${base}${reversal ? ':reversal' : ''}`),
          raw,
        },
      });
    });
  }

  /** A detail's amount: its own (`Amt`, or `AmtDtls/TxAmt/Amt`), or the entry's when it is the entry's only detail. */
  private detailAmount(d: Scope, detailCount: number, entryAmount: number): number {
    const [text, currency, path] = d.texts.has('Amt')
      ? [d.texts.get('Amt'), d.currency!.get('Amt'), 'TxDtls/Amt']
      : [d.texts.get('AmtDtls/TxAmt/Amt'), d.currency!.get('AmtDtls/TxAmt/Amt'), 'TxDtls/AmtDtls/TxAmt/Amt'];
    if (text === undefined && detailCount > 1) this.fail(path, 'each of several TxDtls needs its amount', d.line);
    return text === undefined ? entryAmount : camtAmount(this.failIn(d, 'TxDtls/'), text, currency, path);
  }

  private closeReport(): void {
    this.announceAccount();
    const t = this.report!.texts;
    const fail = this.failIn(this.report!, '');
    const check = (path: string, actual: number) => {
      const given = t.get(path);
      if (given === undefined) return;
      const value = path.endsWith('Sum') ? camtAmount(fail, given, 'JPY', path) : Number(given);
      if (value !== actual) fail(path, `is ${given}; the entries give ${actual}`);
    };
    check('TxsSummry/TtlCdtNtries/NbOfNtries', this.totals.credits);
    check('TxsSummry/TtlCdtNtries/Sum', this.totals.creditSum);
    check('TxsSummry/TtlDbtNtries/NbOfNtries', this.totals.debits);
    check('TxsSummry/TtlDbtNtries/Sum', this.totals.debitSum);
    this.report = undefined;
  }
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}
