import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type AdapterCredentials, type MerchantClient, TestSystem, adapterCredentials, adapterHeaders, api } from '@pmatch/testkit';
import {
  StoredState,
  apiKeyCredentials,
  asSent,
  expectAnswer,
  expectFuzzed,
  futureTimestamp,
  isAmount,
  isLimit,
  isName,
  isRecord,
  isTimestamp,
  jsonValue,
  limitValue,
  listItems,
  nearlyValidBody,
  objectOf,
  onlyKeys,
  pastTimestamp,
  queryPairs,
  refused,
  startingAfterOf,
  startFuzzing,
  timestamp,
  unicodeName,
  weirdNumber,
  weirdString,
  judgeListQuery,
  type FuzzOutcome,
  type FuzzTarget,
  type Want,
} from './support/hostile-input';

/**
 * Hostile input on the webhook-endpoint API and on bank-ingest (fuzz.test.ts has the rest of
 * orders-api), the same way: FUZZ_RUNS cases per endpoint, each answer exactly what the rules
 * below give (stated from docs/guide.md, not from the services' schemas), errors in the
 * body, and nothing stored by a refused request. Bank notifications are signed with a real
 * adapter secret, so their bodies get past authentication to the rules.
 */

jest.setTimeout(900_000);
let system: TestSystem;
let stored: StoredState;
let outcomes: Map<string, Promise<FuzzOutcome>>;
let strangerEndpoint: string;
let strangerEvent: string;

interface Merchant {
  orgId: string;
  key: string;
  client: MerchantClient;
}

async function merchant(name: string): Promise<Merchant> {
  const { orgId, testKey, client } = await system.createMerchant({ name });
  return { orgId, key: testKey, client };
}

beforeAll(async () => {
  system = await TestSystem.start({
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    LOG_LEVEL: 'error',
    // Endpoint URLs on loopback pass the address check; port 1 refuses every delivery at once.
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
  });
  stored = await StoredState.connect(system);
  const stranger = await merchant('他社');
  strangerEndpoint = await createEndpoint(stranger);
  strangerEvent = (await stranger.client.events())[0]?.id ?? (await stranger.client.createOrder(), (await stranger.client.events())[0].id);
  outcomes = startFuzzing(setups(), stored);
}, 180_000);

afterAll(async () => {
  await Promise.all([...(outcomes?.values() ?? [])]);
  await stored?.close();
  await system?.stop();
});

async function createEndpoint(m: Merchant, body: Record<string, unknown> = {}): Promise<string> {
  const res = await m.client.request('POST', '/v1/webhook-endpoints', { url: 'https://127.0.0.1:1/hooks', ...body });
  if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/**
 * What a refused request to the webhook API must leave alone: what the API writes of the
 * organisation's endpoints (not failing_since, which the dispatcher keeps), the requests it
 * queues for the dispatcher (resend, test), and its events.
 */
const webhookReading = (m: Merchant) => async () =>
  JSON.stringify(
    (
      await stored.query(
        `SELECT (SELECT count(*) || ':' || md5(coalesce(string_agg(concat_ws(',', id, url, array_to_string(enabled_events, ' '), enabled, disabled_reason,
                      secret_encrypted, previous_secret_encrypted, previous_secret_expires_at, deleted_at), '|' ORDER BY id), ''))
               FROM webhook_endpoints WHERE organisation_id = $1) AS endpoints,
              (SELECT count(*) FROM outbox WHERE payload->>'endpoint_id' IN (SELECT id FROM webhook_endpoints WHERE organisation_id = $1)) AS dispatcher_requests,
              (SELECT count(*) FROM events WHERE organisation_id = $1) AS events`,
        [m.orgId],
      )
    )[0],
  );

// ---------------------------------------------------------------------------------------------
// The webhook API's rules (docs/guide.md "Webhooks")

/** Spec Events table: the types an endpoint can select (webhook.test is sent only by the test action). */
const SUBSCRIBABLE = [
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

/**
 * Only https, no credentials in the URL, and (localhost and private addresses are refused)
 * no address outside WEBHOOK_ALLOWED_CIDRS, which is loopback here; at most 2,048 characters. The
 * generated URLs name no host that needs DNS but localhost, so the verdict never hangs on a lookup.
 */
function isAllowedUrl(v: unknown): boolean {
  if (typeof v !== 'string' || v.length === 0 || v.length > 2048) return false;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && url.username === '' && url.password === '' && /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
}
const url = {
  valid: fc.oneof(
    fc.constantFrom('https://127.0.0.1:1/hooks', 'https://127.0.0.2/x?y=1', 'https://127.1.2.3:8443/a/b', 'https://127.1/short'),
    fc.string({ maxLength: 60 }).map((path) => `https://127.0.0.1:1/${encodeURIComponent(path)}`),
  ),
  bent: fc.oneof(
    weirdString,
    weirdNumber,
    fc.constantFrom(
      'http://127.0.0.1/plain-http',
      'https://localhost/',
      'https://10.0.0.1/',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/',
      'https://[fe80::1]/',
      'https://0.0.0.0/',
      'https://user:pass@127.0.0.1/',
      'ftp://127.0.0.1/',
      'https://127.0.0.1:99999/',
      'https://',
      '//127.0.0.1/x',
      `https://127.0.0.1/${'a'.repeat(2100)}`,
      'javascript:alert(1)',
      'file:///etc/passwd',
      null,
    ),
  ),
};
const isEventSelection = (v: unknown) =>
  Array.isArray(v) &&
  v.length >= 1 &&
  new Set(v).size === v.length &&
  (JSON.stringify(v) === '["*"]' || v.every((t) => typeof t === 'string' && SUBSCRIBABLE.includes(t)));
const enabledEvents = {
  valid: fc.oneof(fc.constant(['*']), fc.shuffledSubarray(SUBSCRIBABLE, { minLength: 1 })),
  bent: fc.oneof(
    jsonValue,
    fc.constantFrom(
      [],
      ['*', 'order.paid'],
      ['order.paid', 'order.paid'],
      ['webhook.test'],
      ['ORDER.PAID'],
      'order.paid',
      [...SUBSCRIBABLE, 'order.paid'],
      [null],
    ),
  ),
};

function judgeCreateEndpoint(body: unknown): Want {
  const b = body === undefined ? {} : body;
  if (!isRecord(b) || !onlyKeys(b, ['url', 'enabled_events'])) return refused;
  return isAllowedUrl(b.url) && (b.enabled_events === undefined || isEventSelection(b.enabled_events)) ? { status: 201 } : refused;
}
function judgeUpdateEndpoint(body: unknown): Want {
  const b = body === undefined ? {} : body;
  if (!isRecord(b) || Object.keys(b).length === 0 || !onlyKeys(b, ['url', 'enabled_events', 'enabled'])) return refused;
  const ok =
    (b.url === undefined || isAllowedUrl(b.url)) &&
    (b.enabled_events === undefined || isEventSelection(b.enabled_events)) &&
    (b.enabled === undefined || typeof b.enabled === 'boolean');
  return ok ? { status: 200 } : refused;
}
const emptyBody = fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant({}) }, { weight: 8, arbitrary: jsonValue });
const judgeEmpty =
  (success: number) =>
  (body: unknown): Want =>
    body === undefined || (isRecord(body) && Object.keys(body).length === 0) ? { status: success } : refused;

const selectionOf = (sent: Record<string, unknown>) =>
  sent.enabled_events === undefined || JSON.stringify(sent.enabled_events) === '["*"]' ? undefined : [...(sent.enabled_events as string[])].sort();
function expectEndpointAsSent(res: { body: any }, sent: Record<string, unknown>): void {
  const e = res.body;
  const selection = selectionOf(sent);
  const ok =
    e.object === 'webhook_endpoint' &&
    (sent.url === undefined || e.url === new URL(String(sent.url)).href) &&
    (selection === undefined || JSON.stringify([...e.enabled_events].sort()) === JSON.stringify(selection)) &&
    (sent.enabled === undefined || e.enabled === sent.enabled);
  if (!ok) throw new Error(`the endpoint is not what was sent: ${JSON.stringify(sent)} → ${JSON.stringify(e)}`);
}

/** An event id names an event of the caller's mode (404 when it names none); anything else is not an event id (400). */
const WELL_FORMED_EVENT_ID = /^evt_(test_)?[0-9A-Za-z]{12,40}$/;

// ---------------------------------------------------------------------------------------------
// Bank notifications (docs/guide.md "For bank adapters")

const DIRECTIONS = ['deposit', 'withdrawal'];

/** The adapter's id and its signature over a body, as Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature. */
function signed(adapter: AdapterCredentials, body: string, at = new Date(), id = `msg_${randomUUID()}`): Record<string, string> {
  return adapterHeaders(adapter, body, { at, messageId: id });
}

/** Signature headers that must not get a notification in: missing, stale, for other bytes, by another key, malformed. */
function wrongSignatures(secret: AdapterCredentials): fc.Arbitrary<(body: string | undefined) => Record<string, string>> {
  const other = { id: secret.id, secret: `whsec_${Buffer.from(randomUUID()).toString('base64')}` };
  const without = (name: string) => (body: string | undefined) => Object.fromEntries(Object.entries(signed(secret, body ?? '')).filter(([k]) => k !== name));
  const replace = (name: string, value: string) => (body: string | undefined) => ({ ...signed(secret, body ?? ''), [name]: value });
  const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 200 });
  return fc.oneof(
    fc.constantFrom(
      without('webhook-id'),
      without('webhook-timestamp'),
      without('webhook-signature'),
      without('bank-adapter-id'),
      replace('bank-adapter-id', 'adp_000000000000000000000000'),
      replace('bank-adapter-id', 'not an id'),
      () => ({}),
      (body: string | undefined) => signed(secret, body ?? '', new Date(Date.now() - 6 * 60_000)),
      (body: string | undefined) => signed(secret, body ?? '', new Date(Date.now() + 6 * 60_000)),
      (body: string | undefined) => signed(other, body ?? ''),
      (body: string | undefined) => ({ ...signed(secret, `${body ?? ''} `), 'content-type': 'application/json' }),
      (body: string | undefined) => ({ ...signed(secret, body ?? ''), 'webhook-id': `msg_${randomUUID()}` }),
      replace('webhook-timestamp', 'yesterday'),
      replace('webhook-timestamp', '-1'),
      replace('webhook-timestamp', '99999999999999999999'),
      replace('webhook-signature', ''),
      replace('webhook-signature', 'v1,'),
      replace('webhook-signature', `v2,${Buffer.alloc(32).toString('base64')}`),
      replace('webhook-id', 'm'.repeat(5_000)),
    ),
    fc.tuple(fc.constantFrom('webhook-id', 'webhook-timestamp', 'webhook-signature'), printable).map(([name, value]) => replace(name, value)),
  );
}

// ---------------------------------------------------------------------------------------------

function setups(): [string, () => Promise<FuzzTarget>][] {
  const on = (m: Merchant) => ({ baseUrl: system.apiUrl, ...apiKeyCredentials(m.key), organisationId: m.orgId, reading: webhookReading(m) });
  const near = (own: string) => [strangerEndpoint, own.toUpperCase(), `${own}x`, own.replace('we_', 'ord_')];
  const endpoint = (name: string, make: (m: Merchant) => Promise<FuzzTarget>): [string, () => Promise<FuzzTarget>] => [
    name,
    async () => make(await merchant(name)),
  ];
  /** A route on one endpoint of the organisation, which stays. */
  const onEndpoint = (name: string, rest: (m: Merchant, id: string) => Partial<FuzzTarget> & Pick<FuzzTarget, 'good'>) =>
    endpoint(name, async (m) => {
      const id = await createEndpoint(m);
      const [method, template] = name.split(' ') as [FuzzTarget['method'], string];
      return { name, method, template, ...on(m), id: () => id, nearIds: near(id), ...rest(m, id) };
    });
  return [
    endpoint('POST /v1/webhook-endpoints', async (m) => ({
      name: 'POST /v1/webhook-endpoints',
      method: 'POST',
      template: '/v1/webhook-endpoints',
      ...on(m),
      good: { body: () => ({ url: 'https://127.0.0.1:1/good' }), want: { status: 201 } },
      body: { arbitrary: nearlyValidBody({ url, enabled_events: enabledEvents }), judge: judgeCreateEndpoint },
      checkSuccess: async (res, sent) => {
        expectEndpointAsSent(res, sent.body as Record<string, unknown>);
        if (!/^whsec_[A-Za-z0-9+/]+=*$/.test(res.body.secret)) throw new Error(`no secret in ${JSON.stringify(res.body)}`);
        // Deleted again at once, so the 5-endpoint limit never decides a case.
        expectAnswer(await m.client.request('DELETE', `/v1/webhook-endpoints/${res.body.id}`), { status: 200 }, 'deleting the endpoint just created');
      },
    })),
    endpoint('GET /v1/webhook-endpoints', async (m) => {
      const ids = [await createEndpoint(m), await createEndpoint(m, { enabled_events: ['order.paid'] })];
      return {
        name: 'GET /v1/webhook-endpoints',
        method: 'GET',
        template: '/v1/webhook-endpoints',
        ...on(m),
        good: { want: { status: 200 } },
        query: {
          arbitrary: queryPairs({ limit: limitValue, starting_after: startingAfterOf([...ids, strangerEndpoint]) }),
          judge: (params) => judgeListQuery(params, {}, (id) => ids.includes(id)),
        },
        checkSuccess: (res, sent) => void listItems(res, sent.params ?? []),
      };
    }),
    onEndpoint('GET /v1/webhook-endpoints/{id}', (_m, id) => ({
      good: { want: { status: 200 } },
      query: { arbitrary: queryPairs({}), judge: () => ({ status: 200 }) },
      checkSuccess: (res) => {
        if (res.body.id !== id || res.body.secret !== undefined) throw new Error(`GET gave ${JSON.stringify(res.body)}`);
      },
    })),
    onEndpoint('PATCH /v1/webhook-endpoints/{id}', () => ({
      good: { body: () => ({ enabled: true }), want: { status: 200 } },
      body: {
        arbitrary: nearlyValidBody({
          url,
          enabled_events: enabledEvents,
          enabled: { valid: fc.boolean(), bent: fc.oneof(weirdString, weirdNumber, fc.constantFrom('true', null)) },
        }),
        judge: judgeUpdateEndpoint,
      },
      checkSuccess: (res, sent) => expectEndpointAsSent(res, (sent.body ?? {}) as Record<string, unknown>),
    })),
    endpoint('DELETE /v1/webhook-endpoints/{id}', async (m) => {
      let id = await createEndpoint(m);
      return {
        name: 'DELETE /v1/webhook-endpoints/{id}',
        method: 'DELETE',
        template: '/v1/webhook-endpoints/{id}',
        ...on(m),
        id: () => id,
        nearIds: near(id),
        good: { want: { status: 200 } },
        checkSuccess: (res) => {
          if (res.body.id !== id || res.body.deleted !== true) throw new Error(`DELETE gave ${JSON.stringify(res.body)}`);
        },
        renew: async () => void (id = await createEndpoint(m)),
      };
    }),
    onEndpoint('GET /v1/webhook-endpoints/{id}/secret', () => ({
      good: { want: { status: 200 } },
      query: { arbitrary: queryPairs({}), judge: () => ({ status: 200 }) },
      checkSuccess: (res) => {
        if (res.body.object !== 'webhook_endpoint_secret' || !String(res.body.secret).startsWith('whsec_'))
          throw new Error(`secret gave ${JSON.stringify(res.body)}`);
      },
    })),
    endpoint('POST /v1/webhook-endpoints/{id}/rotate-secret', async (m) => {
      let id = await createEndpoint(m);
      return {
        name: 'POST /v1/webhook-endpoints/{id}/rotate-secret',
        method: 'POST',
        template: '/v1/webhook-endpoints/{id}/rotate-secret',
        ...on(m),
        id: () => id,
        nearIds: near(id),
        good: { want: { status: 200 } },
        body: { arbitrary: emptyBody, judge: judgeEmpty(200) },
        checkSuccess: (res) => {
          if (res.body.object !== 'webhook_endpoint_secret' || res.body.previous_secret_expires_at === null)
            throw new Error(`rotate gave ${JSON.stringify(res.body)}`);
        },
        // A fresh endpoint after each rotation: an endpoint keeps at most four overlapping old secrets (the fifth rotation is 429).
        renew: async () => {
          expectAnswer(await m.client.request('DELETE', `/v1/webhook-endpoints/${id}`), { status: 200 }, 'deleting the rotated endpoint');
          id = await createEndpoint(m);
        },
      };
    }),
    onEndpoint('POST /v1/webhook-endpoints/{id}/test', () => ({
      good: { want: { status: 202 } },
      body: { arbitrary: emptyBody, judge: judgeEmpty(202) },
      checkSuccess: (res) => {
        if (!/^evt_test_/.test(res.body.id) || res.body.type !== 'webhook.test') throw new Error(`test gave ${JSON.stringify(res.body)}`);
      },
    })),
    endpoint('GET /v1/webhook-endpoints/{id}/deliveries', async (m) => {
      const id = await createEndpoint(m);
      await m.client.createOrder();
      const [event] = await m.client.events();
      const attemptId = fc.oneof(
        fc.bigInt({ min: 0n, max: 10n ** 18n - 1n }).map((n) => `dla_${n}`),
        weirdString,
        fc.constantFrom('dla_', 'dla_-1', 'dla_1e3', `dla_${'9'.repeat(19)}`),
      );
      const eventId = fc.oneof(fc.constantFrom(event.id, strangerEvent, 'evt_test_000000000000'), weirdString, fc.constantFrom('evt_', 'ord_000000000000'));
      const isAttemptId = (v: string) => /^dla_[0-9]{1,18}$/.test(v);
      return {
        name: 'GET /v1/webhook-endpoints/{id}/deliveries',
        method: 'GET',
        template: '/v1/webhook-endpoints/{id}/deliveries',
        ...on(m),
        id: () => id,
        nearIds: near(id),
        good: { want: { status: 200 } },
        // The log is a search: any well-formed attempt id is a cursor and any well-formed event id a filter, found or not.
        query: {
          arbitrary: queryPairs({ limit: limitValue, starting_after: attemptId, event_id: eventId }),
          judge: (params) => {
            const names = params.map(([k]) => k);
            if (new Set(names).size !== names.length) return refused;
            const ok = params.every(
              ([k, v]) => (k === 'limit' && isLimit(v)) || (k === 'starting_after' && isAttemptId(v)) || (k === 'event_id' && WELL_FORMED_EVENT_ID.test(v)),
            );
            return ok ? { status: 200 } : refused;
          },
        },
        checkSuccess: (res, sent) => void listItems(res, sent.params ?? []),
      };
    }),
    endpoint('POST /v1/webhook-endpoints/{id}/deliveries/resend', async (m) => {
      const id = await createEndpoint(m);
      await m.client.createOrder();
      const [event] = await m.client.events();
      const body = nearlyValidBody({
        event_id: {
          valid: fc.constantFrom(event.id),
          bent: fc.oneof(weirdString, weirdNumber, fc.constantFrom(strangerEvent, 'evt_000000000000000000000000', 'evt_test_000000000000', 'evt_', null)),
        },
      });
      return {
        name: 'POST /v1/webhook-endpoints/{id}/deliveries/resend',
        method: 'POST',
        template: '/v1/webhook-endpoints/{id}/deliveries/resend',
        ...on(m),
        id: () => id,
        nearIds: near(id),
        good: { body: () => ({ event_id: event.id }), want: { status: 202 } },
        body: {
          arbitrary: body,
          judge: (sent) => {
            const b = sent === undefined ? {} : sent;
            if (!isRecord(b) || !onlyKeys(b, ['event_id'])) return refused;
            if (b.event_id === event.id) return { status: 202 };
            return typeof b.event_id === 'string' && WELL_FORMED_EVENT_ID.test(b.event_id) ? { status: 404, code: 'resource_missing' } : refused;
          },
        },
        checkSuccess: (res) => {
          if (res.body.event_id !== event.id || res.body.endpoint_id !== id) throw new Error(`resend gave ${JSON.stringify(res.body)}`);
        },
      };
    }),
    ['POST /ingest/v1/notifications', notificationsTarget],
  ];
}

/** Every notification signed by a real adapter, so its body meets the rules rather than the signature check. */
async function notificationsTarget(): Promise<FuzzTarget> {
  const m = await merchant('入金通知');
  const account = await system.addLiveBankAccount(m.orgId, { number: '3000001', holder: 'ｼｮｳﾃﾝ' });
  const liveAccount = String(account.id);
  const testAccount = (await m.client.request('GET', '/v1/bank-accounts')).body.data[0].id as string;
  const secret = adapterCredentials(await system.ops('adapter', 'create', '--name', 'fuzz-bank', '--bank-account', liveAccount));
  const seen = new Set<string>();
  const body = nearlyValidBody({
    bank_account_id: { valid: fc.constant('LIVE'), bent: fc.oneof(weirdString, fc.constantFrom('TEST', 'ba_000000000000000000000000', null)) },
    bank_reference: {
      valid: fc.oneof(fc.uuid(), unicodeName, fc.constantFrom('ref-1', 'ref-2')),
      bent: fc.oneof(weirdString, weirdNumber, fc.constantFrom('', 'x'.repeat(256), 'a\nb')),
    },
    direction: { valid: fc.constantFrom(...DIRECTIONS), bent: fc.oneof(weirdString, fc.constantFrom('DEPOSIT', 'credit', null)) },
    amount: { valid: fc.integer({ min: 1, max: 9_999_999_999 }), bent: fc.oneof(weirdNumber, weirdString, fc.constantFrom(0, 10_000_000_000, '5', null)) },
    counterparty: {
      valid: fc.oneof(unicodeName, fc.constant('')),
      bent: fc.oneof(weirdString, weirdNumber, fc.constantFrom('x'.repeat(101), 'ﾔﾏﾀﾞ\tﾀﾛｳ', null)),
    },
    occurred_at: { valid: fc.oneof(pastTimestamp, futureTimestamp), bent: fc.oneof(timestamp, weirdString, weirdNumber) },
  }).map((b) => {
    if (!isRecord(b)) return b;
    const ids: Record<string, string> = { LIVE: liveAccount, TEST: testAccount };
    return typeof b.bank_account_id === 'string' && Object.hasOwn(ids, b.bank_account_id)
      ? objectOf(Object.entries({ ...b, bank_account_id: ids[b.bank_account_id] }))
      : b;
  });
  const referenceOf = (b: Record<string, unknown>) => `${b.bank_account_id}/${b.bank_reference}`;
  return {
    name: 'POST /ingest/v1/notifications',
    method: 'POST',
    template: '/ingest/v1/notifications',
    baseUrl: system.url('bank-ingest'),
    credentials: (text) => signed(secret, text ?? ''),
    wrongCredentials: wrongSignatures(secret),
    organisationId: m.orgId,
    // Deposits are decided by the matcher after the answer, so what a refusal must not add is a transaction.
    reading: async () => JSON.stringify(await stored.query('SELECT count(*)::int AS n FROM transactions WHERE organisation_id = $1', [m.orgId])),
    good: {
      body: () => ({
        bank_account_id: liveAccount,
        bank_reference: randomUUID(),
        direction: 'deposit',
        amount: 1234,
        counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
        occurred_at: new Date().toISOString(),
      }),
      want: { status: 202 },
    },
    body: {
      arbitrary: body,
      // The six fields, each required; an account the adapter is not bound to (any but the live
      // one, the test account included) is 403; a bank's own time is taken as given.
      judge: (sent) => {
        const b = sent === undefined ? {} : sent;
        if (!isRecord(b) || !onlyKeys(b, ['bank_account_id', 'bank_reference', 'direction', 'amount', 'counterparty', 'occurred_at'])) return refused;
        const ok =
          typeof b.bank_account_id === 'string' &&
          /^ba_[0-9A-Za-z]{12,40}$/.test(b.bank_account_id) &&
          isName(b.bank_reference, 255, 1) &&
          DIRECTIONS.includes(b.direction as string) &&
          isAmount(b.amount) &&
          isName(b.counterparty, 100) &&
          isTimestamp(b.occurred_at);
        if (!ok) return refused;
        if (b.bank_account_id !== liveAccount) return { status: 403 };
        return { status: seen.has(referenceOf(b)) ? 200 : 202 };
      },
    },
    checkSuccess: (res, sent) => {
      const b = sent.body as Record<string, unknown>;
      const duplicate = res.status === 200;
      if (!/^txn_/.test(res.body.transaction_id) || res.body.duplicate !== duplicate)
        throw new Error(`notification gave ${res.status} ${JSON.stringify(res.body)}`);
      seen.add(referenceOf(b));
    },
  };
}

// ---------------------------------------------------------------------------------------------

describe('fuzzing webhook endpoints and bank-ingest', () => {
  test.each([
    'POST /v1/webhook-endpoints',
    'GET /v1/webhook-endpoints',
    'GET /v1/webhook-endpoints/{id}',
    'PATCH /v1/webhook-endpoints/{id}',
    'DELETE /v1/webhook-endpoints/{id}',
    'GET /v1/webhook-endpoints/{id}/secret',
    'POST /v1/webhook-endpoints/{id}/rotate-secret',
    'POST /v1/webhook-endpoints/{id}/test',
    'GET /v1/webhook-endpoints/{id}/deliveries',
    'POST /v1/webhook-endpoints/{id}/deliveries/resend',
    'POST /ingest/v1/notifications',
  ])('when %s gets hostile bodies, query strings, path ids and headers, then each gets exactly its answer and a refused one stores nothing', (name) =>
    expectFuzzed(outcomes.get(name), name),
  );
});

describe('bank-ingest limits', () => {
  let m: Merchant;
  let liveAccount: string;
  let secret: AdapterCredentials;
  const transactions = async () =>
    (await stored.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE organisation_id = $1', [m.orgId]))[0]!.n;

  beforeAll(async () => {
    m = await merchant('入金限度');
    liveAccount = String((await system.addLiveBankAccount(m.orgId, { number: '3000002', holder: 'ｼｮｳﾃﾝ' })).id);
    secret = adapterCredentials(await system.ops('adapter', 'create', '--name', 'limits-bank', '--bank-account', liveAccount));
  });

  const push = (text: string, headers: Record<string, string>) =>
    api(system.url('bank-ingest'), 'POST', '/ingest/v1/notifications', { rawBody: text, headers: { 'content-type': 'application/json', ...headers } });

  test('when a notification exceeds 1 MiB, then 413 body_too_large with the error body (401 before its body is read when unsigned) and nothing stored', async () => {
    const before = await transactions();
    const text = JSON.stringify({
      bank_account_id: liveAccount,
      bank_reference: randomUUID(),
      direction: 'deposit',
      amount: 1,
      counterparty: 'x'.repeat(1024 * 1024),
      occurred_at: new Date().toISOString(),
    });
    expectAnswer(await push(text, signed(secret, text)), { status: 413, code: 'body_too_large' }, 'a signed notification over 1 MiB');
    expectAnswer(await push(text, {}), { status: 401, code: 'invalid_api_key' }, 'an unsigned notification over 1 MiB');
    expect(await transactions()).toBe(before);
  });

  test('when a signed notification is nested 1,000 to 100,000 levels deep or is not a JSON object, then 400 and nothing stored', async () => {
    const before = await transactions();
    const texts = [1_000, 10_000, 100_000].flatMap((depth) => [`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, `${'['.repeat(depth)}${']'.repeat(depth)}`]);
    for (const text of [...texts, 'null', '[]', '"x"', '{"amount":1e400}', '{"amount": 1,}', '{"counterparty":"\\ud800"}']) {
      expectAnswer(await push(text, signed(secret, text)), { status: 400 }, `signed ${text.slice(0, 30)}`);
    }
    expect(await transactions()).toBe(before);
  });
});

test('the URL rule refuses what the guide refuses', () => {
  expect(
    [
      'http://127.0.0.1/',
      'https://localhost/',
      'https://10.0.0.1/',
      'https://[::1]/',
      'https://user:p@127.0.0.1/',
      'x',
      `https://127.0.0.1/${'a'.repeat(2048)}`,
    ].map(isAllowedUrl),
  ).toEqual(Array(7).fill(false));
  expect(['https://127.0.0.1:1/hooks', 'https://127.1/short'].map(isAllowedUrl)).toEqual([true, true]);
  expect(asSent([['a', '\ud800']]).params).toEqual([['a', '\ufffd']]);
});
