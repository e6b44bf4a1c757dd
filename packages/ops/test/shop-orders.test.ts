import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MatcherCommand, QUEUES, type OrderReply } from '@pmatch/contracts';
import { insertOrder, orderObject, type PrismaClient } from '@pmatch/db';
import { Broker, createLogger } from '@pmatch/platform';
import { RABBITMQ_URL, uniqueName, usePrismaTestDatabase, type TestDatabase } from '@pmatch/testkit';
import * as commands from '../src/commands';
import { expectFailure, runOps, runOpsOk } from './run-ops';

const PUBLIC_BASE_URL = 'https://pay.example.test';
const DAY = 24 * 60 * 60 * 1000;
/** Nothing listens there: a command that touched the broker would fail with a broker error. */
const NO_BROKER = { RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:1', AMQP_PREFIX: '' };

let db: TestDatabase;
let prisma: PrismaClient;

usePrismaTestDatabase({ poolSize: 2 }, (opened) => ({ db, prisma } = opened));

const ops = (args: string[], env: Record<string, string> = {}) => runOpsOk(db.url, args, { PUBLIC_BASE_URL, ...NO_BROKER, ...env });
const opsRun = (args: string[], env: Record<string, string> = {}) => runOps(db.url, args, { PUBLIC_BASE_URL, ...NO_BROKER, ...env });

async function createOrganisation(name = 'ショップ商店'): Promise<string> {
  return (await commands.createOrganisation(prisma, { name, ownerEmail: 'owner@example.com' })).id;
}

/** An organisation whose first test key created its one test bank account. */
async function merchantWithTestAccount(): Promise<{ organisationId: string; testAccountId: string }> {
  const organisationId = await createOrganisation();
  await commands.issueApiKey(prisma, { organisationId, mode: 'test', name: 'k', permission: 'read_write' });
  const account = await prisma.bankAccount.findFirstOrThrow({ where: { organisationId, mode: 'test' } });
  return { organisationId, testAccountId: account.id };
}

async function addLiveBankAccount(organisationId: string, accountNumber: string): Promise<string> {
  const account = await commands.addLiveBankAccount(prisma, {
    organisationId,
    bankCode: '0005',
    branchCode: '200',
    accountNumber,
    holderName: 'ｼﾖﾂﾌﾟ',
  });
  return account.id;
}

let sequence = 0;
/** A valid `shop-order create`, with a fresh external id; an override of undefined leaves the flag out. */
function shopOrderArgs(organisationId: string, overrides: Record<string, string | undefined> = {}): string[] {
  sequence += 1;
  const flags: Record<string, string | undefined> = {
    org: organisationId,
    mode: 'test',
    amount: '3300',
    'payer-name': 'ヤマダ タロウ',
    'external-id': `shop-${sequence}`,
    'item-name': 'お米 5kg',
    ...overrides,
  };
  return ['shop-order', 'create', ...Object.entries(flags).flatMap(([flag, value]) => (value === undefined ? [] : [`--${flag}`, value]))];
}

/** Row counts of what creating or paying an order writes. */
async function orderRows() {
  const [orders, events, outbox, inbox] = await Promise.all([prisma.order.count(), prisma.event.count(), prisma.outbox.count(), prisma.inbox.count()]);
  return { orders, events, outbox, inbox };
}

describe('shop-order create', () => {
  test('when a shop order is created, then it is printed with source shop and stored with order.created and its order.registered outbox row', async () => {
    const { organisationId, testAccountId } = await merchantWithTestAccount();

    const order = await ops(shopOrderArgs(organisationId, { metadata: '{"shop_order":"#1001"}' }));

    expect(order).toEqual({
      id: expect.stringMatching(/^ord_/),
      object: 'order',
      livemode: false,
      status: 'open',
      amount: 3300,
      payer_name: 'ヤマダ タロウ',
      payer_name_bank_form: 'ﾔﾏﾀﾞ ﾀﾛｳ',
      payer_name_printable: true,
      payment_link_id: null,
      external_id: expect.stringMatching(/^shop-/),
      item_name: 'お米 5kg',
      bank_account_id: testAccountId,
      ordered_at: order.created_at,
      expires_at: new Date(Date.parse(String(order.created_at)) + 14 * DAY).toISOString(),
      closed_at: null,
      metadata: { shop_order: '#1001' },
      payment_url: expect.stringMatching(/^https:\/\/pay\.example\.test\/pay\/[0-9A-Za-z]{32}$/),
      source: 'shop',
      transfer_code: expect.stringMatching(/^[1-9][0-9]{6}$/),
      dedicated_account: false,
      customer_reference: null,
      transfer_to: {
        bank_code: '9999',
        bank_name: 'テスト銀行',
        branch_code: '001',
        branch_name: 'テスト支店',
        account_type: 'ordinary',
        account_number: expect.stringMatching(/^[0-9]{7}$/),
        holder_name: expect.any(String),
      },
      payment: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const id = String(order.id);
    const row = await prisma.order.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ organisationId, mode: 'test', source: 'shop', status: 'open', amount: 3300n });
    expect(orderObject(row, PUBLIC_BASE_URL)).toEqual(order);
    const events = await prisma.event.findMany({ where: { organisationId } });
    expect(events).toEqual([expect.objectContaining({ type: 'order.created', mode: 'test', bankAccountId: testAccountId, data: { object: order } })]);
    const registered = await prisma.outbox.findUniqueOrThrow({ where: { messageId: `registered_${id}` } });
    expect(registered).toMatchObject({ routingKey: 'order.registered', payload: { orders: [{ order_id: id, bank_account_id: testAccountId }] } });
    expect(await prisma.outbox.count({ where: { messageId: events[0]!.id, routingKey: 'event.recorded' } })).toBe(1);
  });

  test('when the clock is moved, then the default and the limits of the times follow the injected clock', async () => {
    const { organisationId } = await merchantWithTestAccount();
    const clockDir = mkdtempSync(join(tmpdir(), 'ops-clock-'));
    const clockFile = join(clockDir, 'offset-ms');
    writeFileSync(clockFile, String(30 * DAY));
    const tenDaysAhead = new Date(Date.now() + 10 * DAY).toISOString();
    try {
      const movedClock = { NODE_ENV: 'test', TEST_CLOCK_FILE: clockFile };

      const order = await ops(shopOrderArgs(organisationId, { 'ordered-at': tenDaysAhead }), movedClock);
      const refused = await opsRun(shopOrderArgs(organisationId, { 'ordered-at': tenDaysAhead }), { TEST_CLOCK_FILE: '' });

      expect(Date.parse(String(order.created_at))).toBeGreaterThan(Date.now() + 29 * DAY);
      expect(order.ordered_at).toBe(tenDaysAhead);
      expect(Date.parse(String(order.expires_at)) - Date.parse(String(order.created_at))).toBe(14 * DAY);
      expect(expectFailure(refused, 2)).toMatchObject({ code: 'ordered_at_in_future', message: 'ordered_at may be at most 5 minutes in the future.' });
    } finally {
      rmSync(clockDir, { recursive: true, force: true });
    }
  });

  test('when times, a bank account and metadata are given, then the order carries them', async () => {
    const organisationId = await createOrganisation();
    const first = await addLiveBankAccount(organisationId, '2000001');
    const second = await addLiveBankAccount(organisationId, '2000002');
    const orderedAt = '2026-01-05T09:00:00+09:00';
    const expiresAt = new Date(Date.now() + 3 * DAY).toISOString();

    const order = await ops(
      shopOrderArgs(organisationId, { mode: 'live', 'bank-account': second, 'ordered-at': orderedAt, 'expires-at': expiresAt, metadata: '{}' }),
    );

    expect(order).toMatchObject({
      livemode: true,
      bank_account_id: second,
      ordered_at: '2026-01-05T00:00:00.000Z',
      expires_at: expiresAt,
      metadata: {},
      source: 'shop',
    });
    expect(order.bank_account_id).not.toBe(first);
  });

  test('when the external_id is already used in the organisation and mode, then it exits 4 (conflict) naming the order and writes nothing', async () => {
    const { organisationId } = await merchantWithTestAccount();
    const args = shopOrderArgs(organisationId);
    const first = await ops(args);
    const before = await orderRows();

    const again = await opsRun(args);

    const error = expectFailure(again, 4);
    expect(error.code).toBe('external_id_conflict');
    expect(error.message).toContain(`already has a test order with external_id "${args[args.indexOf('--external-id') + 1]}": ${String(first.id)}`);
    expect(await orderRows()).toEqual(before);
  });

  test('when the same external_id is used in the other mode, then both orders exist', async () => {
    const { organisationId } = await merchantWithTestAccount();
    await addLiveBankAccount(organisationId, '3000001');
    const testArgs = shopOrderArgs(organisationId);
    const externalId = testArgs[testArgs.indexOf('--external-id') + 1]!;

    const testOrder = await ops(testArgs);
    const liveOrder = await ops(shopOrderArgs(organisationId, { mode: 'live', 'external-id': externalId }));

    expect([testOrder.livemode, liveOrder.livemode]).toEqual([false, true]);
    expect(liveOrder.external_id).toBe(externalId);
  });

  test('when a command does not need the broker, then broker settings are neither read nor used', async () => {
    const { organisationId } = await merchantWithTestAccount();

    const order = await ops(shopOrderArgs(organisationId), { RABBITMQ_URL: 'not a url', AMQP_PREFIX: 'NOT VALID' });

    expect(order.source).toBe('shop');
  });
});

describe('shop-order create with invalid input', () => {
  let organisationId: string;
  let otherOrganisationId: string;
  let otherTestAccountId: string;
  let twoLiveAccountsOrganisationId: string;
  let liveAccountId: string;

  beforeAll(async () => {
    ({ organisationId } = await merchantWithTestAccount());
    ({ organisationId: otherOrganisationId, testAccountId: otherTestAccountId } = await merchantWithTestAccount());
    liveAccountId = await addLiveBankAccount(organisationId, '4000001');
    twoLiveAccountsOrganisationId = await createOrganisation();
    await addLiveBankAccount(twoLiveAccountsOrganisationId, '5000001');
    await addLiveBankAccount(twoLiveAccountsOrganisationId, '5000002');
  });

  const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
  const metadataOfKeys = (count: number) => JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, n) => [`k${n}`, 'v'])));

  /** The case, its arguments, a part of the message, and the exit code when not 2 (the input is wrong). */
  const cases: [string, () => string[], string, number?][] = [
    ['amount 0', () => shopOrderArgs(organisationId, { amount: '0' }), '--amount must be a whole number from 1 to 9999999999'],
    ['amount above the limit', () => shopOrderArgs(organisationId, { amount: '10000000000' }), '--amount must be a whole number'],
    ['a fractional amount', () => shopOrderArgs(organisationId, { amount: '1.5' }), '--amount must be a whole number'],
    ['a negative amount', () => shopOrderArgs(organisationId, { amount: '-5' }), '--amount'],
    ['a payer name of 101 characters', () => shopOrderArgs(organisationId, { 'payer-name': 'ア'.repeat(101) }), '--payer-name must be at most 100 characters'],
    ['a payer name of only spaces', () => shopOrderArgs(organisationId, { 'payer-name': '   ' }), '--payer-name'],
    ['an external id of 256 characters', () => shopOrderArgs(organisationId, { 'external-id': 'x'.repeat(256) }), '--external-id must be 1 to 255 characters'],
    ['an empty item name', () => shopOrderArgs(organisationId, { 'item-name': '' }), '--item-name must be 1 to 255 characters'],
    ['an item name of 256 characters', () => shopOrderArgs(organisationId, { 'item-name': 'x'.repeat(256) }), '--item-name'],
    [
      'ordered-at without an offset',
      () => shopOrderArgs(organisationId, { 'ordered-at': '2026-01-05T09:00:00' }),
      '--ordered-at must be an RFC 3339 timestamp with an offset',
    ],
    [
      'ordered-at more than 5 minutes ahead',
      () => shopOrderArgs(organisationId, { 'ordered-at': inMinutes(6) }),
      'ordered_at may be at most 5 minutes in the future',
    ],
    ['expires-at in the past', () => shopOrderArgs(organisationId, { 'expires-at': inMinutes(-1) }), 'expires_at must be in the future and after ordered_at'],
    [
      'expires-at before ordered-at',
      () => shopOrderArgs(organisationId, { 'ordered-at': inMinutes(4), 'expires-at': inMinutes(3) }),
      'expires_at must be in the future and after ordered_at',
    ],
    ['metadata that is not JSON', () => shopOrderArgs(organisationId, { metadata: '{a:1}' }), '--metadata must be a JSON object of string values'],
    ['metadata that is an array', () => shopOrderArgs(organisationId, { metadata: '["a"]' }), '--metadata must be a JSON object'],
    ['metadata with a number value', () => shopOrderArgs(organisationId, { metadata: '{"a":1}' }), '--metadata'],
    ['metadata with 51 keys', () => shopOrderArgs(organisationId, { metadata: metadataOfKeys(51) }), 'at most 50 keys'],
    ['no amount', () => shopOrderArgs(organisationId, { amount: undefined }), '--amount is required'],
    ['a bad mode', () => shopOrderArgs(organisationId, { mode: 'production' }), '--mode must be one of test, live'],
    ['an organisation that does not exist', () => shopOrderArgs('org_AAAAAAAAAAAAAAAAAAAAAAAA'), 'organisation org_AAAAAAAAAAAAAAAAAAAAAAAA does not exist', 3],
    [
      "another organisation's bank account",
      () => shopOrderArgs(organisationId, { 'bank-account': otherTestAccountId }),
      'is not a test bank account of organisation',
    ],
    ['a live account for a test order', () => shopOrderArgs(organisationId, { 'bank-account': liveAccountId }), 'is not a test bank account of organisation'],
    ['no account in the mode', () => shopOrderArgs(otherOrganisationId, { mode: 'live' }), 'has no live bank account: add one with ops bank-account add'],
    [
      'several accounts and none chosen',
      () => shopOrderArgs(twoLiveAccountsOrganisationId, { mode: 'live' }),
      'has 2 live bank accounts; say which with --bank-account',
    ],
    ['an unknown flag', () => shopOrderArgs(organisationId, { source: 'api' }), 'usage: ops shop-order create'],
  ];

  test.each(cases)('when given %s, then it exits non-zero with one clear JSON error and writes nothing', async (_, args, message, exitCode = 2) => {
    const before = await orderRows();

    const run = await opsRun(args());

    expect(expectFailure(run, exitCode).message).toContain(message);
    expect(await orderRows()).toEqual(before);
  });
});

describe('shop-order pay', () => {
  const prefix = `${uniqueName('ops-t')}.`;
  const broker = { RABBITMQ_URL, AMQP_PREFIX: prefix };
  let fakeMatcher: Broker;
  let stopFakeMatcher: () => Promise<void>;
  const received: MatcherCommand[] = [];
  let answer: (command: MatcherCommand) => Promise<OrderReply>;

  /** Plays the matcher on this test's own AMQP prefix: records each command and answers it. */
  beforeAll(async () => {
    fakeMatcher = await Broker.connect(RABBITMQ_URL, prefix, createLogger('fake-matcher', 'silent'));
    stopFakeMatcher = await fakeMatcher.consume(
      QUEUES.matcherCommands,
      MatcherCommand,
      async (delivery) => {
        received.push(delivery.body);
        await fakeMatcher.reply(delivery.replyTo!, delivery.correlationId!, await answer(delivery.body));
      },
      { prefetch: 1 },
    );
  });

  afterAll(async () => {
    await stopFakeMatcher();
    await fakeMatcher.deleteTopology();
    await fakeMatcher.close();
  });

  beforeEach(() => {
    received.length = 0;
  });

  async function shopOrder(mode: 'test' | 'live' = 'test'): Promise<string> {
    const { organisationId } = await merchantWithTestAccount();
    if (mode === 'live') await addLiveBankAccount(organisationId, '6000001');
    return String((await ops(shopOrderArgs(organisationId, { mode }))).id);
  }

  test('when a shop order is paid, then order.mark_paid with trigger shop goes to the matcher and its answer is printed; ops writes nothing itself', async () => {
    const orderId = await shopOrder('live');
    const row = await prisma.order.findUniqueOrThrow({ where: { id: orderId } });
    const paidOrder = {
      ...orderObject(row, PUBLIC_BASE_URL),
      status: 'paid_outside' as const,
      closed_at: '2026-11-22T02:17:01.123Z',
      payment: {
        transaction_id: null,
        amount: 3300,
        counterparty: 'ヤマダ タロウ',
        occurred_at: '2026-11-22T01:00:00.000Z',
        matched_at: '2026-11-22T02:17:01.123Z',
        decided_by: 'shop',
        trigger: 'shop',
        reason: 'manual',
      },
    };
    answer = async () => ({ ok: true, order: paidOrder });
    const before = await orderRows();

    const printed = await ops(['shop-order', 'pay', '--order', orderId, '--paid-at', '2026-11-22T10:00:00+09:00'], broker);

    expect(received).toEqual([
      { type: 'order.mark_paid', organisation_id: row.organisationId, mode: 'live', order_id: orderId, trigger: 'shop', paid_at: '2026-11-22T01:00:00.000Z' },
    ]);
    expect(printed).toEqual(paidOrder);
    expect(await prisma.order.findUniqueOrThrow({ where: { id: orderId } })).toEqual(row);
    expect(await orderRows()).toEqual(before);
  });

  test('when paid_at is left out, then the command carries none and the matcher takes its own now', async () => {
    const orderId = await shopOrder();
    const row = await prisma.order.findUniqueOrThrow({ where: { id: orderId } });
    answer = async () => ({ ok: true, order: { ...orderObject(row, PUBLIC_BASE_URL), status: 'paid_outside' } });

    await ops(['shop-order', 'pay', '--order', orderId], broker);

    expect(received).toEqual([{ type: 'order.mark_paid', organisation_id: row.organisationId, mode: 'test', order_id: orderId, trigger: 'shop' }]);
  });

  test('when the matcher refuses with a conflict, then it exits 4 with the refusal as its error', async () => {
    const orderId = await shopOrder();
    answer = async () => ({ ok: false, error: { code: 'order_not_open', message: 'The order is paid_outside; only an open order can be marked paid.' } });

    const run = await opsRun(['shop-order', 'pay', '--order', orderId], broker);

    expect(expectFailure(run, 4)).toEqual({
      code: 'order_not_open',
      message: 'the matcher refused (order_not_open): The order is paid_outside; only an open order can be marked paid.',
    });
  });

  test('when the matcher does not answer in time, then it exits 1 saying so', async () => {
    const orderId = await shopOrder();
    const unattendedPrefix = `${uniqueName('ops-t')}.`;
    try {
      const run = await opsRun(['shop-order', 'pay', '--order', orderId], { RABBITMQ_URL, AMQP_PREFIX: unattendedPrefix, COMMAND_TIMEOUT_MS: '300' });

      const error = expectFailure(run, 1);
      expect(error.code).toBe('service_unavailable');
      expect(error.message).toContain('the matcher did not answer within 300 ms');
      expect((await prisma.order.findUniqueOrThrow({ where: { id: orderId } })).status).toBe('open');
    } finally {
      const cleanup = await Broker.connect(RABBITMQ_URL, unattendedPrefix, createLogger('cleanup', 'silent'));
      await cleanup.deleteTopology();
      await cleanup.close();
    }
  });

  test('when RabbitMQ cannot be reached, then it exits 1 saying so and the order stays open', async () => {
    const orderId = await shopOrder();

    const run = await opsRun(['shop-order', 'pay', '--order', orderId]);

    expect(expectFailure(run, 1)).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('cannot reach RabbitMQ (RABBITMQ_URL): ') });
    expect(run.stderr).not.toContain('guest:guest');
    expect((await prisma.order.findUniqueOrThrow({ where: { id: orderId } })).status).toBe('open');
  });

  test('when an order did not come from a shop platform, then it is refused before the broker is asked', async () => {
    const { organisationId, testAccountId } = await merchantWithTestAccount();
    const apiOrder = await insertOrder(
      prisma,
      {
        organisationId,
        mode: 'test',
        bankAccountId: testAccountId,
        amount: 1200,
        payerName: 'ヤマダ タロウ',
        externalId: 'api-1',
        itemName: 'x',
        orderedAt: new Date(),
        expiresAt: new Date(Date.now() + DAY),
        metadata: {},
        source: null,
      },
      new Date(),
      PUBLIC_BASE_URL,
    );

    const run = await opsRun(['shop-order', 'pay', '--order', apiOrder.id]);

    expect(expectFailure(run, 2).message).toContain(`order ${apiOrder.id} did not come from a shop platform`);
  });

  const invalid: [string, string[], string, number][] = [
    ['no order', ['shop-order', 'pay'], '--order is required', 2],
    ['a malformed order id', ['shop-order', 'pay', '--order', 'txn_AAAAAAAAAAAAAAAAAAAAAAAA'], '--order must be an id like ord_…', 2],
    ['an order that does not exist', ['shop-order', 'pay', '--order', 'ord_AAAAAAAAAAAAAAAAAAAAAAAA'], 'order ord_AAAAAAAAAAAAAAAAAAAAAAAA does not exist', 3],
    [
      'paid-at without an offset',
      ['shop-order', 'pay', '--order', 'ord_AAAAAAAAAAAAAAAAAAAAAAAA', '--paid-at', '2026-11-22 10:00'],
      '--paid-at must be an RFC 3339 timestamp',
      2,
    ],
  ];

  test.each(invalid)(
    'when given %s, then it exits non-zero with a JSON error, without asking the broker, and writes nothing',
    async (_, args, message, exitCode) => {
      const before = await orderRows();

      const run = await opsRun(args);

      expect(expectFailure(run, exitCode).message).toContain(message);
      expect(await orderRows()).toEqual(before);
    },
  );
});

describe('commands that do not talk to the matcher', () => {
  test('when the broker settings are invalid, then org create still works', async () => {
    const organisation = await ops(['org', 'create', '--name', 'n', '--owner-email', 'a@example.com'], { RABBITMQ_URL: 'not a url' });

    expect(organisation.object).toBe('organisation');
  });
});
