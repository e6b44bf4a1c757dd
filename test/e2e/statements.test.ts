import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  adapterCredentials,
  type AdapterCredentials,
  MerchantClient,
  TestSystem,
  camtFile,
  waitFor,
  zenginFile,
  type ZenginAccountSpec,
} from '@pmatch/testkit';
import { pushStatement } from '../../examples/bank-adapter/src/adapter';
import { liveAccount, notify, signedPost } from './support/bank';

let system: TestSystem;
/** Where bank-ingest keeps uploads while it imports them: empty again after every request. */
const spool = mkdtempSync(join(tmpdir(), 'statement-spool-'));
const MAX_BYTES = 1024 * 1024;

beforeAll(async () => {
  // Hundreds of uploads from one address and adapter: the upload limits have a test of their own
  // (statement-upload-limits.test.ts), so here they are far above what the tests send.
  system = await TestSystem.start({
    STATEMENT_MAX_BYTES: String(MAX_BYTES),
    STATEMENT_SPOOL_DIR: spool,
    STATEMENT_LIMIT_PER_SECOND: '1000',
    STATEMENT_LIMIT_BURST: '100000',
  });
});

afterAll(async () => {
  await system?.stop();
  rmSync(spool, { recursive: true, force: true });
});

/** Days in Tokyo, counted back from the services' today. */
const tokyoDay = (daysAgo: number) => new Date(system.now().getTime() + 9 * 3_600_000 - daysAgo * 86_400_000).toISOString().slice(0, 10);
const importStatement = (adapter: AdapterCredentials, file: Uint8Array | string, query = '') =>
  signedPost(system, `/ingest/v1/statements${query}`, adapter, file, typeof file === 'string' ? 'application/xml' : 'application/octet-stream');

interface Shop {
  orgId: string;
  live: MerchantClient;
  accounts: string[];
  adapter: AdapterCredentials;
  adapterId: string;
}

/** A merchant with live accounts (numbers given), a live key, and one adapter bound to all of them. */
async function shop(numbers: string[]): Promise<Shop> {
  const { orgId } = await system.createMerchant();
  const accounts = [];
  for (const number of numbers) accounts.push(await liveAccount(system, orgId, { number }));
  const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'l')).key));
  const adapter = await system.ops('adapter', 'create', '--name', 'bank', ...accounts.flatMap((id) => ['--bank-account', id]));
  return { orgId, live, accounts, adapter: adapterCredentials(adapter), adapterId: String(adapter.id) };
}

async function paidBy(client: MerchantClient, orderId: string) {
  return waitFor(
    async () => {
      const order = (await client.request('GET', `/v1/orders/${orderId}`)).body;
      return order.status === 'paid' ? order : undefined;
    },
    { what: `order ${orderId} to be paid` },
  );
}

const pendingDeposits = async (orgId: string) =>
  (await system.sql<{ n: number }>(`SELECT count(*)::int AS n FROM transactions WHERE organisation_id = $1 AND status = 'pending'`, [orgId]))[0]!.n;

const counts = async (orgId: string) =>
  (
    await system.sql<{ transactions: number; events: number }>(
      `SELECT (SELECT count(*)::int FROM transactions WHERE organisation_id = $1) AS transactions, (SELECT count(*)::int FROM events WHERE organisation_id = $1) AS events`,
      [orgId],
    )
  )[0]!;

describe('statement import', () => {
  test('when a Zengin 03 file of three accounts names payers as banks write them, then each deposit pays its order, and the same file again stores nothing', async () => {
    const s = await shop(['7100001', '7100002', '7100003']);
    const day = tokyoDay(1);
    const orderedAt = `${tokyoDay(2)}T10:00:00+09:00`;
    const payers = ['ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ', 'ｻﾄｳ ｼﾞﾛｳ', 'ﾀﾅｶ ﾊﾅｺ'];
    const orders = [];
    for (const [i, payer] of payers.entries()) {
      orders.push(await s.live.createOrder({ amount: 3100 + i, payer_name: payer, bank_account_id: s.accounts[i], ordered_at: orderedAt }));
    }
    const accounts: ZenginAccountSpec[] = [
      {
        accountNumber: '7100001',
        records: [
          { date: day, amount: 3100, name: 'ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ', reference: 11 },
          { date: day, amount: 880, direction: 'out', memo: 'ﾃｽｳﾘﾖｳ' },
        ],
      },
      { accountNumber: '7100002', records: [{ date: day, amount: 3101, name: 'ｻﾄｳ ｼﾞﾛｳ', reference: 12 }] },
      // A remitter code put in front of the name by the bank, as well as in its own field.
      { accountNumber: '7100003', records: [{ date: day, amount: 3102, name: '0012345678 ﾀﾅｶ ﾊﾅｺ', remitterCode: '12345678', reference: 13 }] },
    ];
    const file = zenginFile({ kind: '03', crlf: true, accounts });

    const res = await importStatement(s.adapter, file);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'statement_import',
      id: expect.stringMatching(/^imp_/),
      format: 'zengin',
      accounts: 3,
      records: 4,
      stored: 4,
      duplicates: 0,
      withdrawals: 1,
      created_at: expect.any(String),
    });
    for (const [i, order] of orders.entries()) {
      const paid = await paidBy(s.live, order.id);
      expect(paid.payment).toMatchObject({ amount: 3100 + i, counterparty: payers[i], reason: 'exact' });
    }
    const withdrawal = await system.sql(
      `SELECT direction, status, counterparty, statement_import_id, adapter_id FROM transactions WHERE bank_account_id = $1 AND direction = 'withdrawal'`,
      [s.accounts[0]],
    );
    expect(withdrawal).toEqual([
      { direction: 'withdrawal', status: 'unmatched', counterparty: 'ﾃｽｳﾘﾖｳ', statement_import_id: res.body.id, adapter_id: s.adapterId },
    ]);
    const raws = await system.sql<{ raw: Buffer; line: number }>(
      `SELECT r.raw, r.line FROM statement_records r JOIN transactions t ON t.id = r.transaction_id WHERE t.bank_account_id = $1 ORDER BY r.line`,
      [s.accounts[1]],
    );
    expect(raws.map((r) => [r.line, r.raw.length])).toEqual([[6, 200]]);
    expect(Buffer.compare(raws[0]!.raw, file.subarray(5 * 202, 5 * 202 + 200))).toBe(0);
    const before = await counts(s.orgId);

    const again = await importStatement(s.adapter, file);

    expect(again.body).toMatchObject({ records: 4, stored: 0, duplicates: 4, withdrawals: 1 });
    expect(await counts(s.orgId)).toEqual(before);
  });

  test('when a Zengin 01 file without CRLF carries two accounts, then its deposits pay their orders, and a cancellation is stored as a withdrawal linked to its deposit', async () => {
    const s = await shop(['7200001', '7200002']);
    const day = tokyoDay(1);
    const orderedAt = `${tokyoDay(3)}T09:00:00+09:00`;
    const first = await s.live.createOrder({ amount: 4100, payer_name: 'ﾆｼﾑﾗ ｹﾞﾝ', bank_account_id: s.accounts[0], ordered_at: orderedAt });
    const second = await s.live.createOrder({ amount: 4200, payer_name: 'ﾕ)ｸﾞﾘ-ﾝﾌｱ-ﾑ', bank_account_id: s.accounts[1], ordered_at: orderedAt });
    const file = zenginFile({
      kind: '01',
      accounts: [
        {
          accountNumber: '7200001',
          records: [
            { date: day, amount: 4100, name: 'ﾆｼﾑﾗ ｹﾞﾝ', reference: 501 },
            { date: day, amount: 990, name: 'ﾏﾁｶﾞｲ', reference: 502 },
            { date: day, amount: 990, name: 'ﾏﾁｶﾞｲ', reference: 502, cancel: true },
          ],
        },
        { accountNumber: '7200002', records: [{ date: day, amount: 4200, name: 'ﾕ)ｸﾞﾘ-ﾝﾌｱ-ﾑ' }] },
      ],
    });

    const res = await importStatement(s.adapter, file, '?format=zengin');

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ format: 'zengin', accounts: 2, records: 4, stored: 4, withdrawals: 1 });
    expect((await paidBy(s.live, first.id)).payment.counterparty).toBe('ﾆｼﾑﾗ ｹﾞﾝ');
    expect((await paidBy(s.live, second.id)).payment.counterparty).toBe('ﾕ)ｸﾞﾘ-ﾝﾌｱ-ﾑ');
    const [cancellation] = await system.sql(
      `SELECT t.direction, t.bank_reference, r.cancels_transaction_id, d.bank_reference AS cancelled FROM transactions t JOIN statement_records r ON r.transaction_id = t.id
       JOIN transactions d ON d.id = r.cancels_transaction_id WHERE t.bank_account_id = $1 AND t.direction = 'withdrawal'`,
      [s.accounts[0]],
    );
    expect(cancellation).toMatchObject({
      direction: 'withdrawal',
      bank_reference: `zengin:${day.replace(/-/g, '')}:502:990:cancel`,
      cancelled: `zengin:${day.replace(/-/g, '')}:502:990`,
    });
  });

  test.each(['02', '08'])('when a camt.054.001.%s file names the debtors where its version puts them, then its deposits pay their orders', async (version) => {
    const s = await shop([`73000${version}`.padEnd(7, '1')]);
    const day = tokyoDay(1);
    const order = await s.live.createOrder({
      amount: 5300,
      payer_name: 'ヤマダ タロウ',
      bank_account_id: s.accounts[0],
      ordered_at: `${tokyoDay(2)}T12:00:00+09:00`,
    });
    const xml = camtFile({
      kind: '054',
      version,
      accounts: [
        {
          accountNumber: `73000${version}`.padEnd(7, '1'),
          entries: [
            { amount: 5300, date: day, name: 'ヤマダ タロウ', reference: `REF-${version}` },
            { amount: 77, date: day, name: 'ホリュウ', status: 'PDNG' },
          ],
        },
      ],
    });

    const res = await importStatement(s.adapter, xml);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ format: `camt.054.001.${version}`, accounts: 1, records: 1, stored: 1 });
    expect((await paidBy(s.live, order.id)).payment).toMatchObject({ counterparty: 'ヤマダ タロウ', reason: 'exact' });
  });

  test('when a deposit was notified with its canonical reference, then the statement that lists it stores no second transaction', async () => {
    const s = await shop(['7400001']);
    const day = tokyoDay(1);
    const notified = await notify(system, s.adapter, {
      account: { bank_code: '0001', branch_code: '001', account_type: 'ordinary', account_number: '7400001' },
      bank_reference: `zengin:${day.replace(/-/g, '')}:4321:6400`,
      direction: 'deposit',
      amount: 6400,
      counterparty: 'ｽｽﾞｷ ｲﾁﾛｳ',
      occurred_at: `${day}T11:00:00+09:00`,
    });
    expect(notified.status).toBe(202);

    const res = await importStatement(
      s.adapter,
      zenginFile({ kind: '03', accounts: [{ accountNumber: '7400001', records: [{ date: day, amount: 6400, name: 'ｽｽﾞｷ ｲﾁﾛｳ', reference: 4321 }] }] }),
    );

    expect(res.body).toMatchObject({ records: 1, stored: 0, duplicates: 1 });
    expect(await system.sql('SELECT id FROM transactions WHERE bank_account_id = $1', [s.accounts[0]])).toEqual([{ id: notified.body.transaction_id }]);
  });

  test('when a deposit was made on the day of its order, it pays the order; one made on an earlier day never does', async () => {
    const s = await shop(['7500001']);
    const orderDay = tokyoDay(1);
    const order = await s.live.createOrder({ amount: 7500, payer_name: 'ｷﾉｼﾀ ﾕｳ', bank_account_id: s.accounts[0], ordered_at: `${orderDay}T18:30:00+09:00` });
    const earlier = zenginFile({
      kind: '03',
      accounts: [{ accountNumber: '7500001', records: [{ date: tokyoDay(2), amount: 7500, name: 'ｷﾉｼﾀ ﾕｳ', reference: 1 }] }],
    });
    const sameDay = zenginFile({
      kind: '03',
      accounts: [{ accountNumber: '7500001', records: [{ date: orderDay, amount: 7500, name: 'ｷﾉｼﾀ ﾕｳ', reference: 2 }] }],
    });

    const first = await importStatement(s.adapter, earlier);
    const decided = await waitFor(
      async () => {
        const [row] = await system.sql('SELECT status FROM transactions WHERE bank_account_id = $1', [s.accounts[0]]);
        return row?.status === 'pending' ? undefined : row;
      },
      { what: 'the earlier deposit to be decided' },
    );
    expect(first.body.stored).toBe(1);
    expect(decided).toEqual({ status: 'unmatched' });
    expect((await s.live.request('GET', `/v1/orders/${order.id}`)).body.status).toBe('open');

    await importStatement(s.adapter, sameDay);

    expect((await paidBy(s.live, order.id)).payment.amount).toBe(7500);
  });

  test('when 平成 and 令和 dates appear in a file, then each is read as its own era', async () => {
    const s = await shop(['7600001']);
    const file = zenginFile({
      kind: '03',
      accounts: [
        {
          accountNumber: '7600001',
          records: [
            { date: '2019-04-30', amount: 100, name: 'ﾍｲｾｲ', reference: 1 },
            { date: '2019-05-01', amount: 101, name: 'ﾚｲﾜ', reference: 2 },
          ],
        },
      ],
    });
    expect(file.subarray(200 + 9, 200 + 15).toString('latin1')).toBe('310430');
    expect(file.subarray(400 + 9, 400 + 15).toString('latin1')).toBe('010501');

    const res = await importStatement(s.adapter, file);

    expect(res.status).toBe(200);
    const rows = await system.sql<{ bank_reference: string; occurred_at: Date }>(
      'SELECT bank_reference, occurred_at FROM transactions WHERE bank_account_id = $1 ORDER BY amount',
      [s.accounts[0]],
    );
    expect(rows.map((r) => [r.bank_reference, r.occurred_at.toISOString()])).toEqual([
      ['zengin:20190430:1:100', '2019-04-30T14:59:59.999Z'],
      ['zengin:20190501:2:101', '2019-05-01T14:59:59.999Z'],
    ]);
  });
});

describe('the reference adapter', () => {
  test('when examples/bank-adapter pushes a Zengin file, then bank-ingest imports it and the deposit pays its order', async () => {
    const s = await shop(['7960001']);
    const order = await s.live.createOrder({
      amount: 7960,
      payer_name: 'ﾊﾞﾝｸ ｱﾀﾞﾌﾟﾀ',
      bank_account_id: s.accounts[0],
      ordered_at: `${tokyoDay(2)}T10:00:00+09:00`,
    });
    const folder = mkdtempSync(join(tmpdir(), 'statement-'));
    const path = join(folder, 'NYUKIN.txt');
    writeFileSync(
      path,
      zenginFile({
        kind: '01',
        crlf: true,
        accounts: [{ accountNumber: '7960001', records: [{ date: tokyoDay(1), amount: 7960, name: 'ﾊﾞﾝｸ ｱﾀﾞﾌﾟﾀ', reference: 3 }] }],
      }),
    );
    try {
      const answer = await pushStatement({ ingestUrl: system.url('bank-ingest'), adapterId: s.adapter.id, secret: s.adapter.secret, maxAttempts: 5 }, path);

      expect(answer).toMatchObject({ status: 200, attempts: 1, body: { object: 'statement_import', stored: 1 } });
      expect((await paidBy(s.live, order.id)).payment.counterparty).toBe('ﾊﾞﾝｸ ｱﾀﾞﾌﾟﾀ');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('ops statement import', () => {
  test('when an operator imports a statement file, then it is stored by the same code and pays the order; a file naming another account stores nothing', async () => {
    const s = await shop(['7950001']);
    const order = await s.live.createOrder({
      amount: 7950,
      payer_name: 'ｵｵﾉ ｼﾞﾕﾝ',
      bank_account_id: s.accounts[0],
      ordered_at: `${tokyoDay(2)}T10:00:00+09:00`,
    });
    const folder = mkdtempSync(join(tmpdir(), 'statement-'));
    const good = join(folder, 'good.txt');
    const other = join(folder, 'other.txt');
    writeFileSync(
      good,
      zenginFile({
        kind: '03',
        crlf: true,
        accounts: [{ accountNumber: '7950001', records: [{ date: tokyoDay(1), amount: 7950, name: 'ｵｵﾉ ｼﾞﾕﾝ', reference: 9 }] }],
      }),
    );
    writeFileSync(
      other,
      zenginFile({ kind: '03', accounts: [{ accountNumber: '7950002', records: [{ date: tokyoDay(1), amount: 10, name: 'ｱ', reference: 1 }] }] }),
    );
    try {
      const imported = await system.ops('statement', 'import', '--bank-account', s.accounts[0]!, '--file', good);
      const refused = system.ops('statement', 'import', '--bank-account', s.accounts[0]!, '--file', other);

      expect(imported).toMatchObject({ object: 'statement_import', format: 'zengin', accounts: 1, records: 1, stored: 1, duplicates: 0 });
      await expect(refused).rejects.toThrow(/record 1 names account 0001-001 ordinary 7950002/);
      expect((await paidBy(s.live, order.id)).payment.counterparty).toBe('ｵｵﾉ ｼﾞﾕﾝ');
      expect(await system.sql('SELECT adapter_id, statement_import_id FROM transactions WHERE bank_account_id = $1', [s.accounts[0]])).toEqual([
        { adapter_id: null, statement_import_id: imported.id },
      ]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('statement import refusals', () => {
  test.each([
    [
      'a trailer sum that is wrong',
      { line: 3, field: '入金額合計' },
      (line: number, record: Buffer) => line === 3 && record.write('0000000009999', 7, 'latin1'),
    ],
    [
      'a date that does not exist (令和8年2月30日)',
      { line: 2, field: '勘定日' },
      (line: number, record: Buffer) => line === 2 && record.write('080230', 9, 'latin1'),
    ],
    ['a record one byte short', { line: 2, field: 'record length' }, undefined],
  ])('when a file has %s, then 422 statement_invalid names the record and field, and nothing is stored', async (_case, location, tamper) => {
    const s = await shop(['7700001']);
    const spec = {
      kind: '03' as const,
      crlf: true,
      accounts: [{ accountNumber: '7700001', records: [{ date: tokyoDay(1), amount: 900, name: 'ｱｵｷ', reference: 1 }] }],
    };
    let file = zenginFile(tamper === undefined ? spec : { ...spec, tamper: (line, record) => void tamper(line, record) });
    if (tamper === undefined) file = Buffer.concat([file.subarray(0, 202 + 199), file.subarray(202 + 200)]);
    const before = await counts(s.orgId);

    const res = await importStatement(s.adapter, file);

    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'statement_invalid', ...location });
    expect(await counts(s.orgId)).toEqual(before);
    expect(await system.sql('SELECT count(*)::int AS n FROM statement_imports WHERE adapter_id = $1', [s.adapterId])).toEqual([{ n: 0 }]);
  });

  test('when adapter A uploads a statement naming an account bound only to adapter B, then 403 account_not_allowed and nothing is stored', async () => {
    const a = await shop(['7800001']);
    const { orgId } = await system.createMerchant();
    const ofB = await liveAccount(system, orgId, { number: '7800002' });
    await system.ops('adapter', 'create', '--name', 'bank-b', '--bank-account', ofB);
    const file = zenginFile({
      kind: '03',
      accounts: [
        { accountNumber: '7800001', records: [{ date: tokyoDay(1), amount: 100, name: 'ｱ', reference: 1 }] },
        { accountNumber: '7800002', records: [{ date: tokyoDay(1), amount: 200, name: 'ｲ', reference: 2 }] },
      ],
    });

    const res = await importStatement(a.adapter, file);

    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'account_not_allowed', line: 4 });
    expect(await counts(a.orgId)).toMatchObject({ transactions: 0 });
    expect(await system.sql('SELECT count(*)::int AS n FROM transactions WHERE bank_account_id = $1', [ofB])).toEqual([{ n: 0 }]);
  });

  test('when a statement is signed by no adapter or by a revoked one, then 401 and nothing is stored', async () => {
    const s = await shop(['7900001']);
    const file = zenginFile({ kind: '03', accounts: [{ accountNumber: '7900001', records: [{ date: tokyoDay(1), amount: 100, name: 'ｱ', reference: 1 }] }] });
    const forged = await importStatement({ id: s.adapterId, secret: 'whsec_' + Buffer.from('not the secret of any adapter').toString('base64') }, file);
    await system.ops('adapter', 'revoke', '--adapter', s.adapterId);
    system.advanceClock(1_001);

    const revoked = await importStatement(s.adapter, file);

    expect([forged.status, revoked.status]).toEqual([401, 401]);
    expect(await counts(s.orgId)).toMatchObject({ transactions: 0 });
  });

  test('when hostile files are uploaded (bytes changed, cut or added; records swapped), then each gets 200 or a 4xx, a refused one stores nothing, and no upload is left on disk', async () => {
    const s = await shop(['7900003']);
    const zengin = zenginFile({
      kind: '03',
      crlf: true,
      accounts: [
        {
          accountNumber: '7900003',
          records: [
            { date: tokyoDay(1), amount: 100, name: 'ｱ', reference: 1 },
            { date: tokyoDay(1), amount: 200, name: 'ﾞｲ', direction: 'out' },
          ],
        },
      ],
    });
    const camt = Buffer.from(
      camtFile({
        kind: '053',
        version: '13',
        accounts: [{ accountNumber: '7900003', entries: [{ amount: 300, date: tokyoDay(1), name: 'ウ', reference: 'C1' }] }],
      }),
    );
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(zengin, camt),
        fc.array(
          fc.record({
            at: fc.nat(),
            cut: fc.integer({ min: 0, max: 30 }),
            insert: fc.oneof(
              fc.uint8Array({ maxLength: 3 }),
              fc.constantFrom(Buffer.from([0x80]), Buffer.from([0xde]), Buffer.from('<!DOCTYPE d [<!ENTITY e "e">]>')),
            ),
          }),
          { maxLength: 3 },
        ),
        async (file, mutations) => {
          let bent = Buffer.from(file);
          for (const m of mutations) bent = Buffer.concat([bent.subarray(0, m.at % bent.length), m.insert, bent.subarray((m.at % bent.length) + m.cut)]);
          // An earlier run's deposits are decided in their own time, with events: wait for that first.
          await waitFor(async () => ((await pendingDeposits(s.orgId)) === 0 ? true : undefined), { what: 'earlier deposits decided' });
          const before = await counts(s.orgId);
          const res = await importStatement(s.adapter, bent);
          statuses.add(res.status);
          expect([200, 403, 422]).toContain(res.status);
          // Removed before the answer, whatever it is.
          expect(readdirSync(spool)).toEqual([]);
          if (res.status !== 200) {
            expect(res.body.error.request_id).toEqual(expect.any(String));
            expect(await counts(s.orgId)).toEqual(before);
          }
        },
      ),
      { numRuns: 40 },
    );
    expect(statuses.has(422)).toBe(true);
    expect(readdirSync(spool)).toEqual([]);
  });

  test('when a statement file is larger than STATEMENT_MAX_BYTES, then 413 body_too_large, nothing stored, and nothing left on disk', async () => {
    const s = await shop(['7900004']);
    const records = Array.from({ length: Math.ceil(MAX_BYTES / 200) + 10 }, (_, i) => ({ date: tokyoDay(1), amount: 1 + i, name: 'ｵｵｷｲ', reference: i + 1 }));

    const res = await importStatement(s.adapter, zenginFile({ kind: '03', accounts: [{ accountNumber: '7900004', records }] }));

    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('body_too_large');
    expect(await counts(s.orgId)).toMatchObject({ transactions: 0 });
    expect(readdirSync(spool)).toEqual([]);
  });

  test('when a camt file declares a DTD with entities, then it is refused with 422 and nothing is expanded or stored', async () => {
    const s = await shop(['7900002']);
    const xml = camtFile({
      kind: '054',
      version: '08',
      doctype: '<!DOCTYPE Document [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>',
      accounts: [{ accountNumber: '7900002', entries: [{ amount: 100, date: tokyoDay(1), name: '&b;', reference: 'X' }] }],
    });

    const res = await importStatement(s.adapter, xml);

    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'statement_invalid', field: 'DOCTYPE' });
    expect(await counts(s.orgId)).toMatchObject({ transactions: 0 });
  });
});
