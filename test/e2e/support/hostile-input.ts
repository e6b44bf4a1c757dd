import { connect } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { api, type ApiResponse, type SqlSession, type TestSystem } from '@pmatch/testkit';

/**
 * The hostile inputs the fuzzers (test/e2e/fuzz*.test.ts) send, what every answer must be, and the
 * runner that gives each endpoint FUZZ_RUNS cases mixing hostile bodies, query strings, path ids
 * and headers. The expected answer of every case is stated here from docs/guide.md, never
 * taken from the services' own schemas: a schema that is wrong would otherwise agree with itself.
 */

/** Cases per endpoint; CI runs the default. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
/** Endpoints fuzzed at once (each on an organisation of its own, so their checks never see each other's writes). */
export const FUZZ_CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 4);

// ---------------------------------------------------------------------------------------------
// What an answer must be

export interface Want {
  status: number;
  /** The error code, where one is certain (a single, known problem). */
  code?: string;
}

/** docs/guide.md "Requests and errors": the type every error status carries. */
const ERROR_TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
  431: 'invalid_request_error',
};

/** Why an error answer is not the error body, or undefined when it is. */
export function errorBodyProblem(res: { status: number; headers: Headers; body: any }): string | undefined {
  const body = res.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the body is not a JSON object';
  if (Object.keys(body).join() !== 'error') return `the body has keys ${Object.keys(body).join(', ')}`;
  const error = body.error;
  if (typeof error !== 'object' || error === null) return 'error is not an object';
  const extra = Object.keys(error).filter((k) => !['type', 'code', 'message', 'param', 'request_id'].includes(k));
  if (extra.length > 0) return `error has unknown keys ${extra.join(', ')}`;
  if (error.type !== ERROR_TYPE_BY_STATUS[res.status]) return `type ${error.type} for status ${res.status}`;
  if (typeof error.code !== 'string' || !/^[a-z_]+$/.test(error.code)) return `code ${JSON.stringify(error.code)}`;
  if (typeof error.message !== 'string' || error.message.length === 0) return 'no message';
  if (error.param !== undefined && typeof error.param !== 'string') return 'param is not a string';
  if (typeof error.request_id !== 'string' || error.request_id !== res.headers.get('request-id')) return 'request_id is not the Request-Id header';
  return undefined;
}

/** Throws, naming the case, unless the answer is exactly the one wanted (with the error body for an error). */
export function expectAnswer(res: ApiResponse, want: Want, what: string): void {
  const shown = () => `${what}\n  → ${res.status} ${JSON.stringify(res.body)?.slice(0, 400)}`;
  if (res.status !== want.status) throw new Error(`expected ${want.status}${want.code ? ` ${want.code}` : ''}: ${shown()}`);
  if (res.status < 400) return;
  const problem = errorBodyProblem(res);
  if (problem !== undefined) throw new Error(`not the error body (${problem}): ${shown()}`);
  if (want.code !== undefined && res.body.error.code !== want.code) throw new Error(`expected code ${want.code}: ${shown()}`);
}

/** One JSON-level `what` for a failure message: short, and safe for lone surrogates. */
export function shown(value: unknown): string {
  const text = value === undefined ? 'no body' : JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text;
}

// ---------------------------------------------------------------------------------------------
// Rules for input, stated from docs/guide.md ("Limits", "Requests and errors")

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CONTROL = /[\u0000-\u001f\u007f]/;

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Text a client may send: a string of at most `max` (and at least `min`) UTF-16 code units, as
 * JavaScript counts them, well-formed (PostgreSQL stores UTF-8, which has no lone surrogates) and
 * without NUL (PostgreSQL text cannot hold it).
 */
export const isText = (v: unknown, max: number, min = 0): v is string =>
  typeof v === 'string' && v.length >= min && v.length <= max && !LONE_SURROGATE.test(v) && !v.includes('\u0000');
/** A name or reference: text without control characters (they cannot be shown or typed at a bank). */
export const isName = (v: unknown, max: number, min = 0): v is string => isText(v, max, min) && !CONTROL.test(v);
/** A person's name: a name that is not blank. */
export const isPersonName = (v: unknown, max: number): v is string => isName(v, max, 1) && v.trim().length > 0;

/** docs/guide.md: amount 1…9,999,999,999 whole units, an integer. */
export const isAmount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 9_999_999_999;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;
/** docs/guide.md: timestamps are RFC 3339 and inputs must carry an offset. */
export function isTimestamp(v: unknown): v is string {
  const m = typeof v === 'string' ? RFC3339.exec(v) : null;
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = m[8] === 'Z' || (Number(m[9]) < 24 && Number(m[10]) < 60);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour < 24 && minute < 60 && second < 60 && offsetOk;
}
/** The generated times are an hour or more from now, so "past" and "future" never depend on a few seconds. */
export const isPast = (v: string) => Date.parse(v) < Date.now();

/**
 * docs/guide.md "Objects": metadata ≤ 50 keys, key 1…40 chars, value a string ≤ 500 chars; and
 * no key `__proto__`, which no JSON body may carry (platform http.ts: it would be lost silently).
 */
export const isMetadata = (v: unknown): boolean =>
  isRecord(v) && Object.keys(v).length <= 50 && Object.entries(v).every(([k, value]) => k !== '__proto__' && isText(k, 40, 1) && isText(value, 500));

/** The body is absent or an object whose keys are all among `allowed`; unknown fields are refused. */
export const onlyKeys = (body: Record<string, unknown>, allowed: string[]) => Object.keys(body).every((k) => allowed.includes(k));

/** What a refused body gets: 400, with the code only where the one problem is certain. */
export const refused: Want = { status: 400 };

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** Strings that break naive code: control characters, lone surrogates, injections, extremes. */
export const weirdString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u0007',
    '\n',
    '\u202e',
    '\ud800',
    '\udc00x',
    '\u3000',
    '\ufeff',
    '𠮷野家',
    'ﾔﾏﾀﾞ ﾀﾛｳ',
    'e\u0301',
    '<script>alert(1)</script>',
    "'; DROP TABLE orders; --",
    '%00',
    '../../etc/passwd',
    '${7*7}',
    '{{7*7}}',
    'x'.repeat(300),
  ),
);
export const weirdNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1, 1.5, 9_999_999_999, 10_000_000_000, Number.MAX_SAFE_INTEGER, 2 ** 63, 1e308, -0, 0.5, Number.NaN, Number.POSITIVE_INFINITY),
);
/** JSON values of every shape, including deep nesting and hostile strings, keyed often by our field names. */
export const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, weirdString, weirdNumber, fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc
    .array(
      fc.tuple(
        fc.oneof(
          weirdString,
          fc.constantFrom(
            'amount',
            'payer_name',
            'external_id',
            'item_name',
            'metadata',
            'order_id',
            'paid_at',
            'counterparty',
            'ordered_at',
            'expires_at',
            'matching_rules',
            'auto_confirm_late_orders',
            'url',
            'enabled_events',
            'enabled',
            'event_id',
            'bank_account_id',
            'bank_reference',
            'direction',
            'occurred_at',
            '__proto__',
            'constructor',
          ),
        ),
        tie('value'),
      ),
      { maxLength: 8 },
    )
    .map(objectOf),
})).value;

/** An object with exactly these own keys, `__proto__` included (plain assignment would set the prototype). */
export function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

/** A timestamp an hour or more in the past or the future, in the formats a client might send, some without an offset. */
export const timestamp = fc
  .tuple(
    fc.oneof(fc.integer({ min: -3 * 365 * 86_400_000, max: -3_600_000 }), fc.integer({ min: 3_600_000, max: 3 * 365 * 86_400_000 })),
    fc.constantFrom('Z', '+09:00', '-05:30', 'no offset', 'date only', 'space', 'epoch'),
  )
  .map(([offsetMs, format]) => {
    const at = new Date(Date.now() + offsetMs);
    const iso = at.toISOString();
    switch (format) {
      case 'Z':
        return iso;
      case '+09:00':
        return `${new Date(at.getTime() + 9 * 3_600_000).toISOString().slice(0, 23)}+09:00`;
      case '-05:30':
        return `${new Date(at.getTime() - 5.5 * 3_600_000).toISOString().slice(0, 23)}-05:30`;
      case 'no offset':
        return iso.slice(0, 23);
      case 'date only':
        return iso.slice(0, 10);
      case 'space':
        return iso.replace('T', ' ');
      default:
        return String(at.getTime());
    }
  });
/** A timestamp in the past, with an offset: valid wherever a past time is. */
export const pastTimestamp = fc.integer({ min: -3 * 365 * 86_400_000, max: -3_600_000 }).map((ms) => new Date(Date.now() + ms).toISOString());
export const futureTimestamp = fc.integer({ min: 3_600_000, max: 3 * 365 * 86_400_000 }).map((ms) => new Date(Date.now() + ms).toISOString());

/** Names in every script, with combining marks, emoji and the half-width katakana banks use. */
export const unicodeName = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 50 }),
  fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 30 }),
  fc.constantFrom('ﾔﾏﾀﾞ ﾀﾛｳ', 'ヤマダ タロウ', 'ｶ)ﾃｽﾄ', '山田　太郎', 'José Müller', '👩‍👩‍👧', 'x'.repeat(100), '𠮷'.repeat(50)),
);

/** A field that is mostly valid and sometimes bent: the cases most likely to slip past a check. */
export interface FieldArbitraries {
  valid: fc.Arbitrary<unknown>;
  bent: fc.Arbitrary<unknown>;
}

/**
 * Bodies close to valid ones: each field valid (most often), bent, or left out, now and then an
 * unknown field; mixed with arbitrary JSON and no body at all.
 */
export function nearlyValidBody(fields: Record<string, FieldArbitraries>): fc.Arbitrary<unknown> {
  const entries = Object.entries(fields).map(([key, f]) =>
    fc.oneof(
      { weight: 12, arbitrary: f.valid.map((v): [string, unknown] => [key, v]) },
      { weight: 2, arbitrary: f.bent.map((v): [string, unknown] => [key, v]) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
  );
  const unknownField = fc.option(
    fc.tuple(fc.oneof(weirdString, fc.constantFrom('id', 'object', 'status', 'livemode', '__proto__', 'constructor')), jsonValue),
    { freq: 15 },
  );
  const nearly = fc
    .tuple(fc.tuple(...entries), unknownField)
    .map(([pairs, extra]) => objectOf([...pairs.filter((p): p is [string, unknown] => p !== undefined), ...(extra ? [extra as [string, unknown]] : [])]));
  return fc.oneof({ weight: 6, arbitrary: nearly }, { weight: 1, arbitrary: jsonValue }, { weight: 1, arbitrary: fc.constant(undefined) });
}

/** Ids that name nothing of the caller's: random text, other kinds' and other tenants' ids, near misses. */
export function hostileId(known: { near: string[] }): fc.Arbitrary<{ text: string; malformed: boolean }> {
  const encoded = (s: string) => ({ text: encodeURIComponent(s), malformed: false });
  // "." and ".." are path segments the URL itself resolves (/v1/orders/. is /v1/orders/): not ids.
  const notDotSegment = (s: string) => !/^\.{1,2}$/.test(s);
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }).filter(notDotSegment).map(encoded) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          ...known.near,
          'ord_',
          'txn_',
          'we_',
          'evt_',
          'ord_0000000000000000000000',
          'ORD_x',
          'null',
          'undefined',
          '0',
          '-1',
          "1' OR '1'='1",
          ' ',
          '\u0000',
          'x'.repeat(2000),
        )
        .map(encoded),
    },
    {
      weight: 1,
      arbitrary: fc
        .string({ unit: fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.split('')), minLength: 12, maxLength: 40 })
        .chain((body) => fc.constantFrom('ord_', 'txn_', 'we_').map((p) => encoded(`${p}${body}`))),
    },
    // Percent-encoding that does not decode: the URL itself is unreadable.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.string({ unit: fc.constantFrom('a', 'b', '1', '_'), maxLength: 8 }), fc.constantFrom('%', '%Z', '%ZZ', '%G0', '%e', '%%', '%u00e9', '%C3%28'))
        .map(([p, m]) => ({ text: `${p}${m}`, malformed: true })),
    },
  );
}

/** Query parameters as pairs (a name may repeat), from the route's own names and hostile ones. */
export function queryPairs(known: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<[string, string][]> {
  const names = Object.keys(known);
  const pair = fc.oneof(
    {
      weight: 6,
      arbitrary:
        names.length === 0
          ? weirdString.map((v): [string, string] => ['limit', v])
          : fc.constantFrom(...names).chain((name) => known[name]!.map((v): [string, string] => [name, v])),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.oneof(weirdString, fc.constantFrom('expand[]', 'limit[]', 'ending_before', 'api_key', '__proto__', 'constructor', 'LIMIT')),
        weirdString,
      ),
    },
  );
  return fc.array(pair, { maxLength: 4 });
}

/** What the server receives for these pairs: they go through URL encoding (a lone surrogate becomes U+FFFD). */
export function asSent(pairs: [string, string][]): { search: string; params: [string, string][] } {
  const search = new URLSearchParams(pairs).toString();
  return { search, params: [...new URLSearchParams(search)] };
}

/** docs/guide.md "Objects": limit is a whole number 1…100. */
export const limitValue = fc.oneof(
  fc.integer({ min: 1, max: 100 }).map(String),
  fc.constantFrom('0', '101', '-1', '1.5', 'abc', '', 'NaN', 'Infinity', '99999999999999999999', '1e400', '10abc'),
  weirdString,
);
/** starting_after values: ids of the list's objects and others', and text that is no id. */
export const startingAfterOf = (ids: string[]) =>
  fc.oneof(fc.constantFrom(...ids), weirdString, fc.constantFrom('ord_000000000000000000000000', 'x'.repeat(65)));
export const isLimit = (v: string) => /^[0-9]+$/.test(v) && Number(v) >= 1 && Number(v) <= 100;

/**
 * The verdict on a list's query: the list's own filters, limit and starting_after (the id of an
 * object in the list), and nothing else, each at most once.
 */
export async function judgeListQuery(
  params: [string, string][],
  filters: Record<string, (v: string) => boolean>,
  isListed: (id: string) => boolean | Promise<boolean>,
): Promise<Want> {
  const names = params.map(([k]) => k);
  if (new Set(names).size !== names.length) return refused;
  for (const [name, value] of params) {
    if (name === 'limit') {
      if (!isLimit(value)) return refused;
    } else if (name === 'starting_after') {
      if (!(await isListed(value))) return refused;
    } else if (!Object.hasOwn(filters, name) || !filters[name]!(value)) {
      return refused;
    }
  }
  return { status: 200 };
}

/** Every item of a list answer, and that it is a list within its limit. */
export function listItems(res: ApiResponse, params: [string, string][]): any[] {
  const body = res.body;
  if (body?.object !== 'list' || !Array.isArray(body.data) || typeof body.has_more !== 'boolean') throw new Error(`not a list: ${shown(body)}`);
  const limit = Number(params.find(([k]) => k === 'limit')?.[1] ?? 20);
  if (body.data.length > limit) throw new Error(`${body.data.length} items for limit ${limit}`);
  return body.data;
}

// ---------------------------------------------------------------------------------------------
// What was stored

/**
 * Everything the API stores for an organisation, as one comparable reading: every row of its
 * orders, transactions, webhook endpoints and settings, and how many events and idempotency keys it
 * has. A refused request must leave it exactly as it was.
 */
export class StoredState {
  private constructor(private readonly session: SqlSession) {}

  static async connect(system: TestSystem): Promise<StoredState> {
    return new StoredState(await system.sqlSession());
  }

  async of(organisationId: string): Promise<string> {
    const digest = (table: string, order: string) =>
      `(SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY ${order}), '')) FROM ${table} t WHERE organisation_id = $1) AS ${table}`;
    const rows = await this.session.query(
      `SELECT ${digest('orders', 't.id')}, ${digest('transactions', 't.id')}, ${digest('webhook_endpoints', 't.id')}, ${digest('settings', 't.mode')},
              (SELECT count(*) FROM events WHERE organisation_id = $1) AS events,
              (SELECT count(*) FROM idempotency_keys WHERE organisation_id = $1) AS idempotency_keys`,
      [organisationId],
    );
    return JSON.stringify(rows[0]);
  }

  /** Reads for a test's own checks, on the same connection. */
  async query<T extends Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
    return this.session.query<T>(text, values);
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Headers

const PRINTABLE = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Authorization values that are not this key: garbage, other schemes, and near misses of the key itself. */
export function wrongAuthorization(key: string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constant(undefined),
    fc.string({ unit: PRINTABLE, maxLength: 300 }),
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      `Bearer ${key}x`,
      `Bearer ${key.slice(0, -1)}`,
      `Bearer ${key.toUpperCase()}`,
      `Bearer ${key} ${key}`,
      `Token ${key}`,
      key,
      `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
      `Bearer ${key.replace(/^svc_(test|live)_/, (_m, mode: string) => `svc_${mode === 'test' ? 'live' : 'test'}_`)}`,
      `Bearer ${'svc_test_'.padEnd(41, 'A')}`,
    ),
    fc
      .tuple(fc.integer({ min: 0, max: key.length - 1 }), fc.constantFrom(...BASE62.split('')))
      .filter(([i, c]) => key[i] !== c)
      .map(([i, c]) => `Bearer ${key.slice(0, i)}${c}${key.slice(i + 1)}`),
  );
}

/** How a body is framed: content types and encodings a client might send. */
export interface Framing {
  what: string;
  headers: Record<string, string>;
  encode: (body: string) => Uint8Array;
  /** The body still reads as the same JSON. */
  readable: boolean;
}
const utf8 = (s: string) => Buffer.from(s, 'utf8');
export const framing: fc.Arbitrary<Framing> = fc.constantFrom<Framing>(
  { what: 'application/json', headers: { 'content-type': 'application/json' }, encode: utf8, readable: true },
  { what: 'charset=utf-8', headers: { 'content-type': 'application/json; charset=utf-8' }, encode: utf8, readable: true },
  { what: 'upper case type', headers: { 'content-type': 'APPLICATION/JSON' }, encode: utf8, readable: true },
  // Every body is read as JSON whatever its declared type (platform http.ts): a form or text type does not change the answer.
  { what: 'text/plain', headers: { 'content-type': 'text/plain' }, encode: utf8, readable: true },
  { what: 'form type', headers: { 'content-type': 'application/x-www-form-urlencoded' }, encode: utf8, readable: true },
  { what: 'no content-type', headers: {}, encode: utf8, readable: true },
  { what: 'gzip', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, encode: (s) => gzipSync(utf8(s)), readable: true },
  { what: 'identity encoding', headers: { 'content-type': 'application/json', 'content-encoding': 'identity' }, encode: utf8, readable: true },
  { what: 'charset=latin1', headers: { 'content-type': 'application/json; charset=latin1' }, encode: utf8, readable: false },
  { what: 'charset=utf-16 over UTF-8 bytes', headers: { 'content-type': 'application/json; charset=utf-16' }, encode: utf8, readable: false },
  { what: 'gzip that is not gzip', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, encode: utf8, readable: false },
  { what: 'unknown encoding', headers: { 'content-type': 'application/json', 'content-encoding': 'compress' }, encode: utf8, readable: false },
);

/**
 * Headers that must change nothing: a browser's Origin (no CORS answer either), proxies' and
 * clients' headers, and a method override that must not be honoured.
 */
export const harmlessHeaders: fc.Arbitrary<Record<string, string>> = fc
  .subarray(
    [
      ['origin', 'https://evil.example'],
      ['x-forwarded-for', '10.0.0.1, 203.0.113.9'],
      ['x-forwarded-host', 'evil.example'],
      ['x-http-method-override', 'DELETE'],
      ['accept', 'text/html'],
      ['accept-language', 'ja-JP'],
      ['cookie', 'session=abc'],
      ['user-agent', '<script>alert(1)</script>'],
      ['x-request-id', '../../etc/passwd'],
      ['request-id', 'req_forged'],
    ] as [string, string][],
    { minLength: 1 },
  )
  .map((pairs) => Object.fromEntries(pairs));

/** Idempotency-Key values that are not keys: the guide takes 1…255 printable ASCII characters. */
export const badIdempotencyKey = fc.oneof(
  fc.constant(''),
  fc.integer({ min: 256, max: 8_000 }).map((n) => 'k'.repeat(n)),
  fc
    .tuple(fc.string({ unit: PRINTABLE, minLength: 1, maxLength: 20 }), fc.string({ unit: PRINTABLE, minLength: 1, maxLength: 20 }))
    .map(([a, b]) => `${a.trim() || 'a'} ${b.trim() || 'b'}`),
);
/** A key nobody used before: printable ASCII, up to 255 characters. */
export function freshIdempotencyKey(seed: string): string {
  const unique = `${Date.now().toString(36)}-${(keyCounter += 1)}-`;
  return `${unique}${seed.replace(/[^\x21-\x7e]/g, '')}`.slice(0, 255);
}
let keyCounter = 0;

/**
 * A raw HTTP/1.1 request, for what fetch refuses to send (control characters and bytes above 0x7f
 * in header values, headers over 16 KiB). Resolves with the status and the parsed body.
 */
export function rawRequest(baseUrl: string, head: string, body = ''): Promise<{ status: number; headers: Headers; body: unknown }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    // Written without half-closing: Node's HTTP server drops a request whose client ended its side
    // before the answer, and every request here says `Connection: close`, so the server closes.
    const socket = connect(Number(url.port), url.hostname, () => socket.write(Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body, 'utf8')])));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headText = '', bodyText = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = headText.split('\r\n');
      const headers = new Headers();
      for (const line of headerLines) {
        const i = line.indexOf(':');
        if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
      }
      let parsed: unknown = bodyText;
      try {
        parsed = JSON.parse(bodyText);
      } catch {
        // Not JSON: the check reports it as such.
      }
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body: parsed });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The runner

export interface SentRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
}

export async function send(baseUrl: string, request: SentRequest): Promise<ApiResponse> {
  const res = await fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    // A Blob of no type: fetch then adds no content-type of its own.
    ...(request.body === undefined ? {} : { body: typeof request.body === 'string' ? request.body : new Blob([request.body as Uint8Array<ArrayBuffer>]) }),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: the check shows it.
  }
  return { status: res.status, headers: res.headers, body };
}

/** Sends through the testkit client, which also checks every /v1 JSON answer against the OpenAPI document. */
export function sendChecked(
  baseUrl: string,
  request: { method: string; path: string; headers: Record<string, string>; rawBody?: string },
): Promise<ApiResponse> {
  return api(baseUrl, request.method, request.path, { headers: request.headers, ...(request.rawBody === undefined ? {} : { rawBody: request.rawBody }) });
}

/** One endpoint as the fuzzer sees it: its path, its input, what good input gets, and how to renew what a success used up. */
export interface FuzzTarget {
  name: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The path, with `{id}` where the object's id goes. */
  template: string;
  baseUrl: string;
  /** The headers that let a request in (an API key, or a bank adapter's signature over the body). */
  credentials: (body: string | undefined) => Record<string, string>;
  /** Headers that must not let it in. */
  wrongCredentials: fc.Arbitrary<(body: string | undefined) => Record<string, string>>;
  organisationId: string;
  /** What is stored that a refused request must leave alone; by default everything of the organisation (StoredState.of). */
  reading?: () => Promise<string>;
  /** The id of the object the requests are about now (renewed after a success used it up). */
  id?: () => string;
  /** Ids a hostile path id must not be confused with: other kinds' and other tenants'. */
  nearIds?: string[];
  /** A request with good input: its body, and what it gets. */
  good: { body?: () => unknown; want: Want };
  /** The route's body rules (writes). */
  body?: { arbitrary: fc.Arbitrary<unknown>; judge: (sent: unknown) => Want };
  /** The route's query rules (GETs). */
  query?: { arbitrary: fc.Arbitrary<[string, string][]>; judge: (params: [string, string][]) => Want | Promise<Want> };
  /** Checks a success's body against what was sent. */
  checkSuccess?: (res: ApiResponse, sent: { body?: unknown; params?: [string, string][] }) => void | Promise<void>;
  /** After a success: renews what it changed (a canceled order, a matched deposit). */
  renew?: () => Promise<void>;
  /** POST /v1/orders: Idempotency-Key cases. */
  idempotencyKeys?: true;
}

type Case =
  | { kind: 'body'; body: unknown }
  | { kind: 'query'; pairs: [string, string][] }
  | { kind: 'path id'; id: { text: string; malformed: boolean } }
  | { kind: 'credentials'; credentials: (body: string | undefined) => Record<string, string> }
  | { kind: 'framing'; framing: Framing }
  | { kind: 'harmless headers'; headers: Record<string, string> }
  | { kind: 'idempotency key'; good: boolean; key: string; body: unknown };

export interface FuzzCounts {
  cases: number;
  byKind: Record<string, number>;
  succeeded: number;
}

/**
 * Runs FUZZ_RUNS cases against one endpoint. Each case is a hostile body, query string, path id or
 * header on an otherwise good request; its answer must be exactly the one the rules give, an error
 * must carry the error body, and a refused request must leave everything stored as it was.
 */
export async function fuzzEndpoint(target: FuzzTarget, stored: StoredState, runs = FUZZ_RUNS): Promise<FuzzCounts> {
  const kinds: { weight: number; arbitrary: fc.Arbitrary<Case> }[] = [];
  if (target.body) kinds.push({ weight: 6, arbitrary: target.body.arbitrary.map((body): Case => ({ kind: 'body', body })) });
  if (target.query) kinds.push({ weight: 6, arbitrary: target.query.arbitrary.map((pairs): Case => ({ kind: 'query', pairs })) });
  if (target.template.includes('{id}')) {
    kinds.push({ weight: 2, arbitrary: hostileId({ near: target.nearIds ?? [] }).map((id): Case => ({ kind: 'path id', id })) });
  }
  kinds.push({ weight: 1, arbitrary: target.wrongCredentials.map((credentials): Case => ({ kind: 'credentials', credentials })) });
  if (target.method === 'POST' || target.method === 'PATCH') kinds.push({ weight: 1, arbitrary: framing.map((f): Case => ({ kind: 'framing', framing: f })) });
  kinds.push({ weight: 1, arbitrary: harmlessHeaders.map((headers): Case => ({ kind: 'harmless headers', headers })) });
  if (target.idempotencyKeys && target.body) {
    const keyCase = fc.oneof(
      fc
        .tuple(fc.string({ unit: PRINTABLE, maxLength: 40 }), target.body.arbitrary)
        .map(([seed, body]): Case => ({ kind: 'idempotency key', good: true, key: seed, body })),
      fc.tuple(badIdempotencyKey, target.body.arbitrary).map(([key, body]): Case => ({ kind: 'idempotency key', good: false, key, body })),
    );
    kinds.push({ weight: 3, arbitrary: keyCase });
  }
  const counts: FuzzCounts = { cases: 0, byKind: {}, succeeded: 0 };
  // What is stored, as read after the last refused case: nothing changes it until the next case, so it is the next "before".
  let lastReading: string | undefined;
  await fc.assert(
    fc.asyncProperty(fc.oneof(...kinds), async (c) => {
      counts.cases += 1;
      counts.byKind[c.kind] = (counts.byKind[c.kind] ?? 0) + 1;
      const before = lastReading ?? (await readingOf(target, stored));
      lastReading = undefined;
      const outcome = await runCase(target, stored, c, before);
      if (outcome.succeeded) counts.succeeded += 1;
      else lastReading = outcome.reading;
    }),
    { numRuns: runs, endOnFailure: true },
  );
  return counts;
}

/** An API key's credentials, and the wrong ones that go with it. */
export function apiKeyCredentials(key: string): Pick<FuzzTarget, 'credentials' | 'wrongCredentials'> {
  return {
    credentials: () => ({ authorization: `Bearer ${key}` }),
    wrongCredentials: wrongAuthorization(key).map((authorization) => (): Record<string, string> => (authorization === undefined ? {} : { authorization })),
  };
}

const readingOf = (target: FuzzTarget, stored: StoredState) => target.reading?.() ?? stored.of(target.organisationId);

function pathOf(target: FuzzTarget, id?: string): string {
  return target.template.replace('{id}', id ?? target.id?.() ?? '');
}

function bodyText(body: unknown): string | undefined {
  return body === undefined ? undefined : JSON.stringify(body);
}

/** The body as the server reads it: JSON turns NaN and Infinity into null and drops undefined. */
function asParsed(text: string | undefined): unknown {
  return text === undefined ? undefined : JSON.parse(text);
}

/** Runs one case; a refused one resolves with what is stored after it (which must be what was stored before). */
async function runCase(target: FuzzTarget, stored: StoredState, c: Case, before: string): Promise<{ succeeded: true } | { succeeded: false; reading: string }> {
  const unchanged = async (what: string) => {
    const reading = await readingOf(target, stored);
    if (reading !== before) throw new Error(`refused, but something was stored: ${what}\n  before ${before}\n  after  ${reading}`);
    return { succeeded: false as const, reading };
  };
  const goodBody = bodyText(target.good.body?.());
  let request: { method: string; path: string; headers: Record<string, string>; body?: string | Uint8Array };
  let want: Want;
  let sent: { body?: unknown; params?: [string, string][] } = { body: asParsed(goodBody) };
  const withJson = (text: string | undefined) => ({ ...(text === undefined ? {} : { 'content-type': 'application/json' }) });
  switch (c.kind) {
    case 'body': {
      const text = bodyText(c.body);
      sent = { body: asParsed(text) };
      want = target.body!.judge(sent.body);
      request = {
        method: target.method,
        path: pathOf(target),
        headers: { ...target.credentials(text), ...withJson(text) },
        ...(text === undefined ? {} : { body: text }),
      };
      break;
    }
    case 'query': {
      const { search, params } = asSent(c.pairs);
      sent = { params };
      want = await target.query!.judge(params);
      request = { method: target.method, path: `${pathOf(target)}${search ? `?${search}` : ''}`, headers: target.credentials(undefined) };
      break;
    }
    case 'path id': {
      // Checked before the body and before the object's state: an unknown id is 404 whatever else.
      want = c.id.malformed ? { status: 400, code: 'parameter_invalid' } : { status: 404, code: 'resource_missing' };
      request = {
        method: target.method,
        path: pathOf(target, c.id.text),
        headers: { ...target.credentials(goodBody), ...withJson(goodBody) },
        ...(goodBody === undefined ? {} : { body: goodBody }),
      };
      break;
    }
    case 'credentials': {
      want = { status: 401, code: 'invalid_api_key' };
      request = {
        method: target.method,
        path: pathOf(target),
        headers: { ...c.credentials(goodBody), ...withJson(goodBody) },
        ...(goodBody === undefined ? {} : { body: goodBody }),
      };
      break;
    }
    case 'harmless headers': {
      want = target.good.want;
      request = {
        method: target.method,
        path: pathOf(target),
        headers: { ...c.headers, ...target.credentials(goodBody), ...withJson(goodBody) },
        ...(goodBody === undefined ? {} : { body: goodBody }),
      };
      break;
    }
    case 'framing': {
      const text = goodBody ?? '{}';
      sent = { body: JSON.parse(text) };
      want = c.framing.readable ? target.good.want : refused;
      request = { method: target.method, path: pathOf(target), headers: { ...target.credentials(text), ...c.framing.headers }, body: c.framing.encode(text) };
      break;
    }
    case 'idempotency key': {
      const text = bodyText(c.body);
      sent = { body: asParsed(text) };
      const key = c.good ? freshIdempotencyKey(c.key) : c.key;
      // A body that is not a JSON object or array is refused as JSON before the key is read.
      const keyIsRead = sent.body === undefined || (typeof sent.body === 'object' && sent.body !== null);
      want = c.good ? target.body!.judge(sent.body) : keyIsRead ? { status: 400, code: 'parameter_invalid' } : refused;
      request = {
        method: target.method,
        path: pathOf(target),
        headers: { ...target.credentials(text), ...withJson(text), 'idempotency-key': key },
        ...(text === undefined ? {} : { body: text }),
      };
      const res = await send(target.baseUrl, request);
      const what = `${target.name} ${c.kind} ${JSON.stringify(key).slice(0, 80)} with ${shown(sent.body)}`;
      expectAnswer(res, want, what);
      if (res.status >= 400) {
        const refusal = await unchanged(what);
        if (!c.good) return refusal;
        // A refused request must not use the key up: the corrected request with it succeeds.
        const retried = await send(target.baseUrl, { ...request, headers: { ...request.headers, 'content-type': 'application/json' }, body: goodBody ?? '{}' });
        expectAnswer(retried, target.good.want, `${what}, then the good body with the same key`);
        await afterSuccess(target, retried, { body: asParsed(goodBody) });
        return { succeeded: true };
      }
      await afterSuccess(target, res, sent);
      // The same key and body again: the stored answer, marked as a replay, and nothing new stored.
      const settled = await readingOf(target, stored);
      const replay = await send(target.baseUrl, request);
      expectAnswer(replay, { status: res.status }, `${what}, sent again`);
      if (replay.headers.get('idempotent-replayed') !== 'true' || !isDeepStrictEqual(replay.body, res.body)) {
        throw new Error(
          `a repeat was not the stored answer: ${what}\n  first  ${JSON.stringify(res.body)}\n  repeat ${replay.headers.get('idempotent-replayed')} ${JSON.stringify(replay.body)}`,
        );
      }
      if ((await readingOf(target, stored)) !== settled) throw new Error(`a replay stored something: ${what}`);
      return { succeeded: true };
    }
  }
  const what = `${target.name} ${c.kind}: ${request.method} ${request.path.slice(0, 200)} ${JSON.stringify(request.headers).slice(0, 200)} ${shown('params' in sent ? sent.params : sent.body)}`;
  const res =
    request.body === undefined || typeof request.body === 'string'
      ? await sendChecked(target.baseUrl, { ...request, ...(request.body === undefined ? {} : { rawBody: request.body as string }) })
      : await send(target.baseUrl, request);
  expectAnswer(res, want, what);
  // No CORS on /v1 (docs/guide.md "Authentication and modes"), whatever the request carried.
  const cors = [...res.headers.keys()].filter((h) => h.startsWith('access-control-'));
  if (cors.length > 0) throw new Error(`CORS headers ${cors.join(', ')}: ${what}`);
  if (res.status >= 400) return unchanged(what);
  await afterSuccess(target, res, sent);
  return { succeeded: true };
}

async function afterSuccess(target: FuzzTarget, res: ApiResponse, sent: { body?: unknown; params?: [string, string][] }): Promise<void> {
  await target.checkSuccess?.(res, sent);
  await target.renew?.();
}

export type FuzzOutcome = { counts: FuzzCounts; ms: number } | { error: unknown };

/**
 * Starts fuzzing every endpoint, FUZZ_CONCURRENCY at a time, each set up (its organisation and
 * objects) just before its turn. Resolves per endpoint with its counts or its failure, never
 * rejecting, so each test can await its own endpoint and report it by name.
 */
export function startFuzzing(
  setups: [string, () => Promise<FuzzTarget>][],
  stored: StoredState,
  concurrency = FUZZ_CONCURRENCY,
): Map<string, Promise<FuzzOutcome>> {
  // FUZZ_ONLY (a regular expression on endpoint names) narrows a local run to the endpoints being worked on.
  const only = process.env.FUZZ_ONLY === undefined ? undefined : new RegExp(process.env.FUZZ_ONLY);
  setups = setups.filter(([name]) => only === undefined || only.test(name));
  const outcomes = new Map<string, Promise<FuzzOutcome>>();
  const starts = new Map<string, () => void>();
  for (const [name] of setups)
    outcomes.set(
      name,
      new Promise<void>((resolve) => starts.set(name, resolve)).then(() => runOne(name)),
    );
  const queue = setups.map(([name]) => name);
  const byName = new Map(setups);
  const runOne = async (name: string): Promise<FuzzOutcome> => {
    const startedAt = Date.now();
    try {
      const counts = await fuzzEndpoint(await byName.get(name)!(), stored);
      return { counts, ms: Date.now() - startedAt };
    } catch (error) {
      return { error };
    }
  };
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      starts.get(name)!();
      await outcomes.get(name);
    }
  };
  for (let i = 0; i < concurrency; i += 1) void worker();
  return outcomes;
}

/** A test's verdict on its endpoint: its failure as is, or enough cases, some accepted and some refused. */
export async function expectFuzzed(outcome: Promise<FuzzOutcome> | undefined, name: string): Promise<void> {
  const result = await outcome;
  if (result === undefined) throw new Error(`${name} was not fuzzed`);
  if ('error' in result) throw result.error;
  const { counts, ms } = result;
  console.log(`${name}: ${counts.cases} cases in ${ms} ms ${JSON.stringify(counts.byKind)}, ${counts.succeeded} accepted`);
  if (counts.cases < FUZZ_RUNS) throw new Error(`${name}: only ${counts.cases} cases`);
  // Both sides of the rules are reached: some cases are accepted, and most are refused.
  if (counts.succeeded === 0 || counts.succeeded === counts.cases) throw new Error(`${name}: ${counts.succeeded} of ${counts.cases} accepted`);
}
