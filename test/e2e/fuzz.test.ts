import fc from 'fast-check';
import { type MerchantClient, TestSystem, api } from '@pmatch/testkit';
import { withoutControlCharacters } from '@pmatch/contracts';
import {
  FUZZ_RUNS,
  StoredState,
  apiKeyCredentials,
  expectAnswer,
  expectFuzzed,
  startFuzzing,
  startingAfterOf,
  type FuzzOutcome,
  futureTimestamp,
  isAmount,
  isMetadata,
  isName,
  isPast,
  isPersonName,
  isRecord,
  isText,
  isTimestamp,
  jsonValue,
  judgeListQuery,
  limitValue,
  listItems,
  nearlyValidBody,
  objectOf,
  onlyKeys,
  pastTimestamp,
  queryPairs,
  rawRequest,
  refused,
  send,
  timestamp,
  unicodeName,
  weirdNumber,
  weirdString,
  type FuzzTarget,
  type Want,
} from './support/hostile-input';

/**
 * Hostile input on every orders-api endpoint but the webhook endpoints (fuzz-webhooks-and-ingest
 * has those and bank-ingest): FUZZ_RUNS cases per endpoint (default 2,000), each a hostile body,
 * query string, path id or header on an otherwise good request. Every answer is exactly the one
 * the guide's rules give (stated in support/hostile-input.ts and here, not taken from the services'
 * schemas), every error carries the error body, and a refused request leaves everything the
 * organisation has stored as it was. Where a success changes the object (cancel closes the
 * order), the next case gets a fresh one, so every case reaches the check it is meant for.
 */

// Tens of thousands of requests on a shared 2-core machine: time is measured in minutes here.
jest.setTimeout(900_000);
let system: TestSystem;
let stored: StoredState;
/** Another organisation: its ids are ids a caller must never reach. */
let stranger: Merchant;
let strangerOrder: string;
let strangerDeposit: string;
let outcomes: Map<string, Promise<FuzzOutcome>>;

interface Merchant {
  orgId: string;
  key: string;
  client: MerchantClient;
  bankAccountId: string;
}

async function merchant(name: string): Promise<Merchant> {
  const { orgId, testKey, client } = await system.createMerchant({ name });
  const accounts = await client.request('GET', '/v1/bank-accounts');
  return { orgId, key: testKey, client, bankAccountId: accounts.body.data[0].id };
}

/** Amounts of fixtures: each its own, so no fixture can be mistaken for another's. */
let nextAmount = 500_000;
const freshAmount = () => (nextAmount += 1);
let nextExternalId = 0;
const uniqueSuffix = () => `#${process.pid}-${(nextExternalId += 1)}`;

beforeAll(async () => {
  system = await TestSystem.start({ RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000', LOG_LEVEL: 'error' });
  stored = await StoredState.connect(system);
  stranger = await merchant('他社');
  strangerOrder = (await openOrder(stranger)).id;
  strangerDeposit = (await stranger.client.deposit(freshAmount(), 'ヨソ')).id;
  outcomes = startFuzzing(setups(), stored);
}, 180_000);

afterAll(async () => {
  // Whatever failed, the endpoints still running finish before the system goes.
  await Promise.all([...(outcomes?.values() ?? [])]);
  await stored?.close();
  await system?.stop();
});

// ---------------------------------------------------------------------------------------------
// The objects the requests are about

const openOrder = (m: Merchant, overrides: Record<string, unknown> = {}) => m.client.createOrder({ amount: freshAmount(), ...overrides });

/** A deposit held with one open order of its amount as the candidate: its name does not fit. */
async function heldPair(m: Merchant): Promise<{ order: string; deposit: string }> {
  const order = await openOrder(m, { payer_name: 'ヤマダ タロウ' });
  const held = await m.client.deposit(order.amount, 'ベツジン');
  if (held.status !== 'held') throw new Error(`fixture not held: ${JSON.stringify(held)}`);
  return { order: order.id, deposit: held.id };
}

/** An order paid by a deposit that fits it exactly. */
async function paidOrder(m: Merchant): Promise<string> {
  const order = await openOrder(m, { payer_name: 'ヤマダ タロウ' });
  const paid = await m.client.deposit(order.amount, 'ヤマダ タロウ');
  if (paid.status !== 'confirmed') throw new Error(`fixture not confirmed: ${JSON.stringify(paid)}`);
  return order.id;
}

async function unmatchedDeposit(m: Merchant): Promise<string> {
  const deposit = await m.client.deposit(freshAmount(), 'ダレカ');
  if (deposit.status !== 'unmatched') throw new Error(`fixture not unmatched: ${JSON.stringify(deposit)}`);
  return deposit.id;
}

async function excludedDeposit(m: Merchant): Promise<string> {
  const id = await unmatchedDeposit(m);
  const excluded = await m.client.request('POST', `/v1/transactions/${id}/exclude`);
  if (excluded.status !== 200) throw new Error(`fixture not excluded: ${JSON.stringify(excluded.body)}`);
  return id;
}

const nearIds = (own: string) => [
  strangerOrder,
  strangerDeposit,
  own.toUpperCase(),
  `${own}x`,
  own.replace(/^(ord|txn)_/, (_m, kind: string) => (kind === 'ord' ? 'txn_' : 'ord_')),
];

// ---------------------------------------------------------------------------------------------
// Bodies and their rules

const anyText = fc.oneof(weirdString, fc.string({ maxLength: 300 }));
const metadataValid = fc.oneof(
  fc.dictionary(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ maxLength: 500 }), { maxKeys: 5 }),
  fc.constant(
    objectOf([
      ['constructor', 'y'],
      ['toString', 'z'],
    ]),
  ),
  fc.constant(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'.repeat(500)]))),
);
const metadataBent = fc.oneof(
  jsonValue,
  fc.constant(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']))),
  fc.constant({ ['k'.repeat(41)]: 'v' }),
  fc.constant({ '': 'v' }),
  fc.constant(
    objectOf([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]),
  ),
  fc.constant({ k: 'v'.repeat(501) }),
  fc.constant({ k: 1 }),
  fc.constant({ k: { nested: 'v' } }),
);
const amountField = {
  valid: fc.oneof(fc.integer({ min: 1, max: 9_999_999_999 }), fc.constantFrom(1, 9_999_999_999)),
  bent: fc.oneof(weirdNumber, weirdString, fc.constantFrom('100', 0, -1, 10_000_000_000, 1.5, null)),
};
const personName = { valid: unicodeName, bent: fc.oneof(weirdString, weirdNumber, fc.constantFrom('', '   ', 'x'.repeat(101), 'ﾔﾏﾀﾞ\nﾀﾛｳ', null)) };

/** Stand-ins the arbitraries use for ids known only once the fixtures exist. */
function withIds(body: unknown, field: string, ids: Record<string, string>): unknown {
  if (!isRecord(body)) return body;
  const value = body[field];
  const id = typeof value === 'string' && Object.hasOwn(ids, value) ? ids[value] : undefined;
  return id === undefined ? body : objectOf(Object.entries({ ...body, [field]: id }));
}

function createOrderBody(m: Merchant) {
  return nearlyValidBody({
    amount: amountField,
    payer_name: personName,
    external_id: { valid: fc.oneof(fc.uuid(), unicodeName), bent: fc.oneof(weirdString, weirdNumber, fc.constantFrom('x'.repeat(256), 'a\tb')) },
    item_name: { valid: fc.oneof(unicodeName, fc.constant('x'.repeat(255))), bent: fc.oneof(anyText, weirdNumber, fc.constantFrom('', 'x'.repeat(256))) },
    bank_account_id: { valid: fc.constant('OWN'), bent: fc.oneof(weirdString, fc.constantFrom('ba_000000000000000000000000', 'STRANGER')) },
    ordered_at: { valid: pastTimestamp, bent: fc.oneof(timestamp, weirdString, futureTimestamp) },
    expires_at: { valid: futureTimestamp, bent: fc.oneof(timestamp, weirdString, pastTimestamp) },
    metadata: { valid: metadataValid, bent: metadataBent },
  }).map((body) => {
    // Unique external ids, so a valid body is a new order (a repeat is another rule, tested in api-rules).
    const unique =
      isRecord(body) && typeof body.external_id === 'string'
        ? objectOf(Object.entries({ ...body, external_id: `${body.external_id}${uniqueSuffix()}` }))
        : body;
    return withIds(unique, 'bank_account_id', { OWN: m.bankAccountId, STRANGER: stranger.bankAccountId });
  });
}

/** POST /v1/orders (docs/guide.md "Orders", "Limits"): 201 for a good order, 400 otherwise. */
const judgeCreateOrder =
  (m: Merchant) =>
  (body: unknown): Want => {
    const b = body === undefined ? {} : body;
    if (!isRecord(b) || !onlyKeys(b, ['amount', 'payer_name', 'external_id', 'item_name', 'bank_account_id', 'ordered_at', 'expires_at', 'metadata']))
      return refused;
    const fieldsOk =
      isAmount(b.amount) &&
      isPersonName(b.payer_name, 100) &&
      isName(b.external_id, 255, 1) &&
      isName(b.item_name, 255, 1) &&
      (b.bank_account_id === undefined || b.bank_account_id === m.bankAccountId) &&
      (b.ordered_at === undefined || isTimestamp(b.ordered_at)) &&
      (b.expires_at === undefined || (isTimestamp(b.expires_at) && !isPast(b.expires_at))) &&
      (b.metadata === undefined || isMetadata(b.metadata));
    if (!fieldsOk) return refused;
    // The one rule with its own code: ordered_at more than 5 minutes ahead (the generated times are an hour or more away).
    if (typeof b.ordered_at === 'string' && !isPast(b.ordered_at)) return { status: 400, code: 'ordered_at_in_future' };
    return { status: 201 };
  };

const goodOrder = () => ({ amount: freshAmount(), payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ', external_id: `good${uniqueSuffix()}`, item_name: 'お米 5kg' });

const sameEntries = (a: object, b: object) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

function expectOrderAsSent(res: { body: any }, sent: Record<string, unknown>): void {
  const order = res.body;
  const same =
    order.amount === sent.amount &&
    // Names are stored without control and format characters (withoutControlCharacters).
    order.payer_name === withoutControlCharacters(String(sent.payer_name)) &&
    order.external_id === sent.external_id &&
    order.item_name === sent.item_name &&
    sameEntries(order.metadata, (sent.metadata as object | undefined) ?? {}) &&
    order.status === 'open' &&
    (sent.expires_at === undefined || Date.parse(order.expires_at) === Date.parse(String(sent.expires_at)));
  if (!same) throw new Error(`the order is not what was sent: ${JSON.stringify(sent)} → ${JSON.stringify(order)}`);
}

const updateOrderBody = nearlyValidBody({ amount: amountField, payer_name: personName, metadata: { valid: metadataValid, bent: metadataBent } });
function judgeUpdateOrder(body: unknown): Want {
  const b = body === undefined ? {} : body;
  if (!isRecord(b) || Object.keys(b).length === 0 || !onlyKeys(b, ['amount', 'payer_name', 'metadata'])) return refused;
  const ok =
    (b.amount === undefined || isAmount(b.amount)) &&
    (b.payer_name === undefined || isPersonName(b.payer_name, 100)) &&
    (b.metadata === undefined || isMetadata(b.metadata));
  return ok ? { status: 200 } : refused;
}

/** Actions that take no body: none, or an empty object. Mostly bent, as each success costs a fresh object. */
const emptyBody = fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant({}) }, { weight: 8, arbitrary: jsonValue });
const judgeEmpty =
  (success: number) =>
  (body: unknown): Want =>
    body === undefined || (isRecord(body) && Object.keys(body).length === 0) ? { status: success } : refused;

const markPaidBody = nearlyValidBody({ paid_at: { valid: pastTimestamp, bent: fc.oneof(timestamp, futureTimestamp, weirdString, weirdNumber) } });
function judgeMarkPaid(body: unknown): Want {
  const b = body === undefined ? {} : body;
  if (!isRecord(b) || !onlyKeys(b, ['paid_at'])) return refused;
  return b.paid_at === undefined || (isTimestamp(b.paid_at) && isPast(b.paid_at)) ? { status: 200 } : refused;
}

const RULES = ['kana_width', 'corporate_abbreviation', 'decorated', 'truncated'];
const settingsBody = nearlyValidBody({
  auto_confirm_late_orders: { valid: fc.boolean(), bent: fc.oneof(weirdString, weirdNumber, fc.constantFrom('true', 0, 1, null)) },
  matching_rules: {
    valid: fc.subarray(RULES).chain((rules) => fc.shuffledSubarray(rules, { minLength: rules.length, maxLength: rules.length })),
    bent: fc.oneof(jsonValue, fc.constantFrom(['kana_width', 'kana_width'], ['KANA_WIDTH'], ['exact'], 'kana_width', [null], [...RULES, 'kana_width'])),
  },
});
function judgeSettings(body: unknown): Want {
  const b = body === undefined ? {} : body;
  if (!isRecord(b) || Object.keys(b).length === 0 || !onlyKeys(b, ['auto_confirm_late_orders', 'matching_rules'])) return refused;
  const rules = b.matching_rules;
  const rulesOk = rules === undefined || (Array.isArray(rules) && rules.every((r) => RULES.includes(r)) && new Set(rules).size === rules.length);
  return (b.auto_confirm_late_orders === undefined || typeof b.auto_confirm_late_orders === 'boolean') && rulesOk ? { status: 200 } : refused;
}

function testDepositBody(m: Merchant) {
  return nearlyValidBody({
    amount: amountField,
    counterparty: personName,
    occurred_at: { valid: pastTimestamp, bent: fc.oneof(timestamp, futureTimestamp, weirdString) },
    bank_account_id: { valid: fc.constant('OWN'), bent: fc.oneof(weirdString, fc.constant('STRANGER')) },
  }).map((body) => withIds(body, 'bank_account_id', { OWN: m.bankAccountId, STRANGER: stranger.bankAccountId }));
}
/** POST /v1/test/deposits: amount and counterparty as a bank sends them; occurred_at not in the future. */
const judgeTestDeposit =
  (m: Merchant) =>
  (body: unknown): Want => {
    const b = body === undefined ? {} : body;
    if (!isRecord(b) || !onlyKeys(b, ['amount', 'counterparty', 'occurred_at', 'bank_account_id'])) return refused;
    const ok =
      isAmount(b.amount) &&
      isPersonName(b.counterparty, 100) &&
      (b.occurred_at === undefined || (isTimestamp(b.occurred_at) && isPast(b.occurred_at))) &&
      (b.bank_account_id === undefined || b.bank_account_id === m.bankAccountId);
    return ok ? { status: 201 } : refused;
  };

// ---------------------------------------------------------------------------------------------
// Queries and their rules

const ORDER_STATUSES = ['open', 'paid', 'paid_outside', 'canceled', 'expired'];
const TRANSACTION_STATUSES = ['pending', 'confirmed', 'held', 'unmatched', 'excluded'];
/** The types GET /v1/events filters by: webhook.test is never recorded, so it is no filter. */
const EVENT_TYPES = [
  'order.created',
  'order.updated',
  'order.paid',
  'order.canceled',
  'order.expired',
  'order.payment_reversed',
  'transaction.deposited',
  'transaction.withdrawn',
  'transaction.held',
];

const idsOf = async (table: string, m: Merchant) =>
  (await stored.query<{ id: string }>(`SELECT id FROM ${table} WHERE organisation_id = $1 AND mode = 'test' ORDER BY id LIMIT 5`, [m.orgId])).map((r) => r.id);
/** starting_after names an object of the list (an id never holds NUL or a lone surrogate, so those are no object). */
const listed = (table: string, m: Merchant) => async (id: string) =>
  isText(id, 200, 1) && (await stored.query(`SELECT 1 FROM ${table} WHERE id = $1 AND organisation_id = $2 AND mode = 'test'`, [id, m.orgId])).length > 0;

type Filters = Record<string, { arbitrary: fc.Arbitrary<string>; valid: (v: string) => boolean }>;

const on = (m: Merchant) => ({ baseUrl: system.apiUrl, ...apiKeyCredentials(m.key), organisationId: m.orgId });

/** Lists: their filters, limit and starting_after. */
async function listTarget(
  name: string,
  m: Merchant,
  table: string,
  filters: Filters,
  matches: (item: any, params: [string, string][]) => boolean,
): Promise<FuzzTarget> {
  const known = await idsOf(table, m);
  return {
    name,
    method: 'GET',
    template: name.slice('GET '.length),
    ...on(m),
    good: { want: { status: 200 } },
    query: {
      arbitrary: queryPairs({
        limit: limitValue,
        starting_after: startingAfterOf([...known, strangerOrder, strangerDeposit]),
        ...Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.arbitrary])),
      }),
      judge: (params) => judgeListQuery(params, Object.fromEntries(Object.entries(filters).map(([k, f]) => [k, f.valid])), listed(table, m)),
    },
    checkSuccess: (res, sent) => {
      const items = listItems(res, sent.params ?? []);
      const stray = items.find((item) => !matches(item, sent.params ?? []));
      if (stray !== undefined) throw new Error(`${name}?${new URLSearchParams(sent.params)} listed ${JSON.stringify(stray).slice(0, 300)}`);
    },
  };
}

/** A GET that takes no query: a query string changes nothing. */
function objectTarget(name: string, m: Merchant, id: string | undefined, object: string): FuzzTarget {
  return {
    name,
    method: 'GET',
    template: name.slice('GET '.length),
    ...on(m),
    ...(id ? { id: () => id, nearIds: nearIds(id) } : {}),
    good: { want: { status: 200 } },
    query: { arbitrary: queryPairs({}), judge: () => ({ status: 200 }) },
    checkSuccess: (res) => {
      if (res.body?.object !== object || (id !== undefined && res.body.id !== id))
        throw new Error(`${name} answered ${JSON.stringify(res.body).slice(0, 300)}`);
    },
  };
}

const filterOf = (param: string, field: string) => (item: any, params: [string, string][]) => params.every(([k, v]) => k !== param || item[field] === v);

function expectStatusField(res: { body: any }, status: string): void {
  if (res.body?.status !== status) throw new Error(`expected status ${status}: ${JSON.stringify(res.body).slice(0, 300)}`);
}

/** An action on one object whose success changes it: the next case gets a fresh one from `fresh`. */
async function actionTarget(
  name: string,
  m: Merchant,
  fresh: () => Promise<string>,
  rest: Omit<FuzzTarget, 'name' | 'method' | 'template' | 'baseUrl' | 'credentials' | 'wrongCredentials' | 'organisationId' | 'id'>,
): Promise<FuzzTarget> {
  let id = await fresh();
  const [method, template] = name.split(' ') as [FuzzTarget['method'], string];
  return { name, method, template, ...on(m), id: () => id, nearIds: nearIds(id), renew: async () => void (id = await fresh()), ...rest };
}

/** Every endpoint, each on an organisation of its own with the objects it needs. */
function setups(): [string, () => Promise<FuzzTarget>][] {
  const endpoint = (name: string, make: (m: Merchant) => Promise<FuzzTarget> | FuzzTarget): [string, () => Promise<FuzzTarget>] => [
    name,
    async () => make(await merchant(name)),
  ];
  return [
    endpoint('POST /v1/orders', (m) => ({
      name: 'POST /v1/orders',
      method: 'POST',
      template: '/v1/orders',
      ...on(m),
      good: { body: goodOrder, want: { status: 201 } },
      body: { arbitrary: createOrderBody(m), judge: judgeCreateOrder(m) },
      idempotencyKeys: true,
      checkSuccess: (res, sent) => expectOrderAsSent(res, sent.body as Record<string, unknown>),
    })),
    endpoint('GET /v1/orders', async (m) => {
      await openOrder(m);
      const closed = await openOrder(m);
      await m.client.request('POST', `/v1/orders/${closed.id}/cancel`);
      return listTarget(
        'GET /v1/orders',
        m,
        'orders',
        {
          status: {
            arbitrary: fc.oneof(fc.constantFrom(...ORDER_STATUSES), weirdString, fc.constantFrom('OPEN', 'paid ', 'all')),
            valid: (v) => ORDER_STATUSES.includes(v),
          },
          external_id: { arbitrary: fc.oneof(fc.constant(closed.external_id as string), weirdString), valid: (v) => isName(v, 255, 1) },
        },
        (item, params) => filterOf('status', 'status')(item, params) && filterOf('external_id', 'external_id')(item, params),
      );
    }),
    endpoint('GET /v1/orders/{id}', async (m) => objectTarget('GET /v1/orders/{id}', m, (await openOrder(m)).id, 'order')),
    endpoint('PATCH /v1/orders/{id}', async (m) => {
      const id = (await openOrder(m)).id;
      return {
        name: 'PATCH /v1/orders/{id}',
        method: 'PATCH',
        template: '/v1/orders/{id}',
        ...on(m),
        id: () => id,
        nearIds: nearIds(id),
        good: { body: () => ({ metadata: { k: 'v' } }), want: { status: 200 } },
        body: { arbitrary: updateOrderBody, judge: judgeUpdateOrder },
        checkSuccess: (res, sent) => {
          const change = (sent.body ?? {}) as Record<string, unknown>;
          const o = res.body;
          const applied =
            o.status === 'open' &&
            (change.amount === undefined || o.amount === change.amount) &&
            (change.payer_name === undefined || o.payer_name === change.payer_name) &&
            (change.metadata === undefined || sameEntries(o.metadata, change.metadata as object));
          if (!applied) throw new Error(`PATCH ${JSON.stringify(change)} gave ${JSON.stringify(o)}`);
        },
      };
    }),
    endpoint('POST /v1/orders/{id}/cancel', (m) =>
      actionTarget('POST /v1/orders/{id}/cancel', m, async () => (await openOrder(m)).id, {
        good: { want: { status: 200 } },
        body: { arbitrary: emptyBody, judge: judgeEmpty(200) },
        checkSuccess: (res) => expectStatusField(res, 'canceled'),
      }),
    ),
    endpoint('POST /v1/orders/{id}/mark-paid', (m) =>
      actionTarget('POST /v1/orders/{id}/mark-paid', m, async () => (await openOrder(m)).id, {
        good: { want: { status: 200 } },
        body: { arbitrary: markPaidBody, judge: judgeMarkPaid },
        checkSuccess: (res) => expectStatusField(res, 'paid_outside'),
      }),
    ),
    endpoint('POST /v1/orders/{id}/reverse', (m) =>
      actionTarget('POST /v1/orders/{id}/reverse', m, () => paidOrder(m), {
        good: { want: { status: 200 } },
        body: { arbitrary: emptyBody, judge: judgeEmpty(200) },
        checkSuccess: (res) => expectStatusField(res, 'open'),
      }),
    ),
    endpoint('GET /v1/transactions', async (m) => {
      await heldPair(m);
      await paidOrder(m);
      await excludedDeposit(m);
      return listTarget(
        'GET /v1/transactions',
        m,
        'transactions',
        {
          status: { arbitrary: fc.oneof(fc.constantFrom(...TRANSACTION_STATUSES), weirdString), valid: (v) => TRANSACTION_STATUSES.includes(v) },
        },
        filterOf('status', 'status'),
      );
    }),
    endpoint('GET /v1/transactions/{id}', async (m) => objectTarget('GET /v1/transactions/{id}', m, await unmatchedDeposit(m), 'transaction')),
    endpoint('POST /v1/transactions/{id}/match', async (m) => {
      let pair = await heldPair(m);
      const otherAmountOrder = (await openOrder(m)).id;
      const matchBody = nearlyValidBody({
        order_id: {
          valid: fc.constantFrom('MATCHED', 'OTHER_AMOUNT'),
          bent: fc.oneof(weirdString, weirdNumber, fc.constantFrom('ord_000000000000000000000000', 'STRANGER', null)),
        },
      }).map((body) => withIds(body, 'order_id', { MATCHED: pair.order, OTHER_AMOUNT: otherAmountOrder, STRANGER: strangerOrder }));
      return {
        name: 'POST /v1/transactions/{id}/match',
        method: 'POST',
        template: '/v1/transactions/{id}/match',
        ...on(m),
        id: () => pair.deposit,
        nearIds: nearIds(pair.deposit),
        good: { body: () => ({ order_id: pair.order }), want: { status: 200 } },
        body: {
          arbitrary: matchBody,
          judge: (body) => {
            const b = body === undefined ? {} : body;
            if (!isRecord(b) || !onlyKeys(b, ['order_id'])) return refused;
            // The order must have the deposit's amount, else 409; an order the caller cannot see is no order.
            if (b.order_id === otherAmountOrder) return { status: 409, code: 'transaction_not_matchable' };
            return b.order_id === pair.order ? { status: 200 } : refused;
          },
        },
        checkSuccess: (res) => {
          if (res.body.status !== 'confirmed' || res.body.order_id !== pair.order) throw new Error(`match gave ${JSON.stringify(res.body)}`);
        },
        renew: async () => void (pair = await heldPair(m)),
      };
    }),
    endpoint('POST /v1/transactions/{id}/exclude', (m) =>
      actionTarget('POST /v1/transactions/{id}/exclude', m, () => unmatchedDeposit(m), {
        good: { want: { status: 200 } },
        body: { arbitrary: emptyBody, judge: judgeEmpty(200) },
        checkSuccess: (res) => expectStatusField(res, 'excluded'),
      }),
    ),
    endpoint('POST /v1/transactions/{id}/restore', (m) =>
      actionTarget('POST /v1/transactions/{id}/restore', m, () => excludedDeposit(m), {
        good: { want: { status: 200 } },
        body: { arbitrary: emptyBody, judge: judgeEmpty(200) },
        checkSuccess: (res) => expectStatusField(res, 'unmatched'),
      }),
    ),
    endpoint('GET /v1/events', async (m) => {
      await openOrder(m);
      await paidOrder(m);
      return listTarget(
        'GET /v1/events',
        m,
        'events',
        {
          type: {
            arbitrary: fc.oneof(fc.constantFrom(...EVENT_TYPES), weirdString, fc.constantFrom('order.*', 'ORDER.CREATED')),
            valid: (v) => EVENT_TYPES.includes(v),
          },
        },
        filterOf('type', 'type'),
      );
    }),
    // docs/guide.md "Objects": every list takes limit and starting_after, the bank accounts' too.
    endpoint('GET /v1/bank-accounts', (m) => listTarget('GET /v1/bank-accounts', m, 'bank_accounts', {}, () => true)),
    endpoint('GET /v1/settings', (m) => objectTarget('GET /v1/settings', m, undefined, 'settings')),
    endpoint('PATCH /v1/settings', (m) => ({
      name: 'PATCH /v1/settings',
      method: 'PATCH',
      template: '/v1/settings',
      ...on(m),
      good: { body: () => ({ auto_confirm_late_orders: false }), want: { status: 200 } },
      body: { arbitrary: settingsBody, judge: judgeSettings },
      checkSuccess: (res, sent) => {
        const change = (sent.body ?? {}) as Record<string, unknown>;
        const s = res.body;
        if (
          (change.auto_confirm_late_orders !== undefined && s.auto_confirm_late_orders !== change.auto_confirm_late_orders) ||
          (change.matching_rules !== undefined &&
            JSON.stringify([...s.matching_rules].sort()) !== JSON.stringify([...(change.matching_rules as string[])].sort()))
        ) {
          throw new Error(`PATCH /v1/settings ${JSON.stringify(change)} gave ${JSON.stringify(s)}`);
        }
      },
    })),
    endpoint('POST /v1/test/deposits', (m) => ({
      name: 'POST /v1/test/deposits',
      method: 'POST',
      template: '/v1/test/deposits',
      ...on(m),
      good: { body: () => ({ amount: freshAmount(), counterparty: 'ヤマダ タロウ' }), want: { status: 201 } },
      body: { arbitrary: testDepositBody(m), judge: judgeTestDeposit(m) },
      checkSuccess: (res, sent) => {
        const b = sent.body as Record<string, unknown>;
        // This organisation has no orders: every deposit is stored unmatched.
        if (res.body.amount !== b.amount || res.body.counterparty !== b.counterparty || res.body.status !== 'unmatched')
          throw new Error(`test deposit ${JSON.stringify(b)} gave ${JSON.stringify(res.body)}`);
      },
    })),
  ];
}

// ---------------------------------------------------------------------------------------------

describe('fuzzing orders-api', () => {
  test.each([
    'POST /v1/orders',
    'GET /v1/orders',
    'GET /v1/orders/{id}',
    'PATCH /v1/orders/{id}',
    'POST /v1/orders/{id}/cancel',
    'POST /v1/orders/{id}/mark-paid',
    'POST /v1/orders/{id}/reverse',
    'GET /v1/transactions',
    'GET /v1/transactions/{id}',
    'POST /v1/transactions/{id}/match',
    'POST /v1/transactions/{id}/exclude',
    'POST /v1/transactions/{id}/restore',
    'GET /v1/events',
    'GET /v1/bank-accounts',
    'GET /v1/settings',
    'PATCH /v1/settings',
    'POST /v1/test/deposits',
  ])('when %s gets hostile bodies, query strings, path ids and headers, then each gets exactly its answer and a refused one stores nothing', (name) =>
    expectFuzzed(outcomes.get(name), name),
  );

  test('when payment page tokens are arbitrary, then the not-found page, never a 5xx', async () => {
    const token = fc.oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }).filter((s) => !/^\.{1,2}$/.test(s)),
      fc.constantFrom('%00', '0'.repeat(32), 'x'.repeat(5000)),
    );
    await fc.assert(
      fc.asyncProperty(token, async (raw) => {
        const res = await fetch(`${system.apiUrl}/pay/${encodeURIComponent(raw)}`);
        await res.text();
        if (res.status !== 404 || !res.headers.get('content-type')?.startsWith('text/html'))
          throw new Error(`${res.status} ${res.headers.get('content-type')} for ${JSON.stringify(raw)}`);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  test('when /v1/openapi.json gets any query string or Authorization, then it is the same public document', async () => {
    const reference = await (await fetch(`${system.apiUrl}/v1/openapi.json`)).text();
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 100 });
    await fc.assert(
      fc.asyncProperty(queryPairs({}), fc.oneof(fc.constant(undefined), printable), async (pairs, authorization) => {
        const res = await fetch(`${system.apiUrl}/v1/openapi.json?${new URLSearchParams(pairs)}`, {
          headers: authorization === undefined ? {} : { authorization },
        });
        expect(res.status).toBe(200);
        expect(await res.text()).toBe(reference);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });
});

describe('limits', () => {
  let m: Merchant;
  beforeAll(async () => {
    m = await merchant('限度');
  });

  test.each([
    [0, 400],
    [-1, 400],
    [1.5, 400],
    [10_000_000_000, 400],
    [10_000_000_001, 400],
    [1e308, 400],
    ['100', 400],
    [null, 400],
    [1, 201],
    [2, 201],
    [9_999_999_998, 201],
    [9_999_999_999, 201],
  ] as const)('when an order has amount %p, then %p', async (amount, status) => {
    const before = await stored.of(m.orgId);
    const res = await m.client.request('POST', '/v1/orders', { ...goodOrder(), amount });
    expectAnswer(res, { status }, `amount ${amount}`);
    if (status === 201) expect(res.body.amount).toBe(amount);
    else expect(await stored.of(m.orgId)).toBe(before);
  });

  test('when a body is nested 1,000 to 100,000 levels deep, with or without an Idempotency-Key, then 400 and nothing stored', async () => {
    // A depth limit in platform http.ts; without it the Idempotency-Key fingerprint recursed until the stack overflowed (500).
    for (const depth of [1_000, 10_000, 100_000]) {
      for (const [open, close] of [
        ['{"metadata":'.concat('{"a":'.repeat(depth - 1)), '}'.repeat(depth)],
        ['['.repeat(depth), ']'.repeat(depth)],
      ] as const) {
        const text = `${open}"x"${close}`;
        for (const headers of [{}, { 'idempotency-key': `deep-${depth}-${open.length}-${Date.now()}` }] as Record<string, string>[]) {
          const before = await stored.of(m.orgId);
          const res = await api(system.apiUrl, 'POST', '/v1/orders', {
            key: m.key,
            rawBody: text,
            headers: { 'content-type': 'application/json', ...headers },
          });
          expectAnswer(res, { status: 400 }, `depth ${depth} ${open.slice(0, 12)} ${JSON.stringify(headers)}`);
          expect(await stored.of(m.orgId)).toBe(before);
        }
      }
    }
  });

  test('when a body exceeds 1 MiB, then 413 body_too_large with the error body and nothing stored', async () => {
    const before = await stored.of(m.orgId);
    const text = JSON.stringify({ ...goodOrder(), item_name: 'x'.repeat(1024 * 1024) });
    const res = await api(system.apiUrl, 'POST', '/v1/orders', { key: m.key, rawBody: text, headers: { 'content-type': 'application/json' } });
    expectAnswer(res, { status: 413, code: 'body_too_large' }, 'a body over 1 MiB');
    expect(await stored.of(m.orgId)).toBe(before);
  });

  test('when header bytes are not valid HTTP (control characters, bytes above 0x7f, over 16 KiB of headers), then 400 or 431 with the error body', async () => {
    const head = (extra: string) =>
      `POST /v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${m.key}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n${extra}Connection: close\r\n\r\n`;
    const before = await stored.of(m.orgId);
    for (const [extra, status] of [
      ['Idempotency-Key: a\u0001b\r\n', 400],
      ['Idempotency-Key: a\u00e9b\r\n', 400],
      [`Idempotency-Key: ${'k'.repeat(20_000)}\r\n`, 431],
    ] as const) {
      const res = await rawRequest(system.apiUrl, head(extra), '{}');
      expectAnswer(res, { status }, `raw header ${JSON.stringify(extra.slice(0, 40))}`);
    }
    expect(await stored.of(m.orgId)).toBe(before);
  });

  test('when a refused request carried an Idempotency-Key, then the corrected request with that key is created', async () => {
    const key = `fix-me-${Date.now()}`;
    const headers = { authorization: `Bearer ${m.key}`, 'content-type': 'application/json', 'idempotency-key': key };
    const refusedFirst = await send(system.apiUrl, { method: 'POST', path: '/v1/orders', headers, body: JSON.stringify({ ...goodOrder(), amount: 0 }) });
    expectAnswer(refusedFirst, { status: 400 }, 'amount 0 with a key');
    const corrected = await send(system.apiUrl, { method: 'POST', path: '/v1/orders', headers, body: JSON.stringify(goodOrder()) });
    expectAnswer(corrected, { status: 201 }, 'the corrected body with the same key');
  });
});

test('the rules the fuzzers judge by can refuse and accept', () => {
  expect([
    isText('\ud800', 10),
    isText('a\u0000', 10),
    isName('a\nb', 10),
    isPersonName('  ', 10),
    isAmount(1.5),
    isTimestamp('2026-02-30T00:00:00Z'),
    isMetadata({ k: 1 }),
    isMetadata(objectOf([['__proto__', 'x']])),
  ]).toEqual(Array(8).fill(false));
  expect([
    isText('𠮷', 2),
    isName('ﾔﾏﾀﾞ', 10),
    isPersonName(' a ', 3),
    isAmount(9_999_999_999),
    isTimestamp('2024-02-29T23:59:59.999+09:00'),
    isMetadata(objectOf([['constructor', 'x']])),
  ]).toEqual(Array(6).fill(true));
});
