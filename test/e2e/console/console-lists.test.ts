import { type Console, type ConsoleSession, useConsole } from './support';

/**
 * The deposit and order lists as a seller works them: the queue oldest first and paged without a
 * gap or a repeat, the held tab narrowed by reason, near misses in the rows, and the CSV files an
 * accountant imports (freee's statement layout), each of one mode only.
 */

let world: Console;

useConsole(async (started) => {
  world = started;
});

/** Held deposits written straight into the store (the matcher decides nothing about them): enough for two pages. */
async function heldInStore(name: string, count: number, reason: string): Promise<string[]> {
  const anchor = await world.merchant.deposit(1, 'アンカー');
  const ids = Array.from({ length: count }, (_, n) => `txn_test_heldqueue${String(n).padStart(8, '0')}`);
  for (const [n, id] of ids.entries()) {
    await world.system.sql(
      `INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, decision, decided_at)
       VALUES ($1, $2, 'test', $3, $1, 'deposit', 'held', $4, $5, now() - make_interval(mins => $6), $7, now())`,
      [id, world.orgId, anchor.bank_account_id, 20_000 + n, name, count - n, JSON.stringify({ reason, candidates: [] })],
    );
  }
  return ids;
}

/** The deposit ids a list page links to, in the page's order. */
async function listedIds(session: ConsoleSession, path: string): Promise<{ ids: string[]; next: string | undefined }> {
  const html = await (await session.get(path)).text();
  const ids = [...html.matchAll(/<a href="\/dashboard\/deposits\/(txn_[A-Za-z0-9_]+)">/g)].map((m) => m[1]!);
  const next = /<a href="(\/dashboard\/deposits\?[^"]*after=[^"]*)">/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  return { ids: [...new Set(ids)], next };
}

describe('the held queue', () => {
  test('when there are more held deposits than a page, then the list starts with the oldest, and its next page goes on with the next oldest, none twice or missing; newest first is a choice', async () => {
    const ids = await heldInStore('ジュンバン テスト', 55, 'several_orders_fit');
    const session = await world.session('viewer');
    const name = encodeURIComponent('じゅんばん');

    const first = await listedIds(session, `/dashboard/deposits?status=held&name=${name}`);
    expect(first.ids).toEqual(ids.slice(0, 50));
    expect(first.next).toBeDefined();
    const second = await listedIds(session, first.next!);
    expect(second.ids).toEqual(ids.slice(50));
    expect(second.next).toBeUndefined();

    const newest = await listedIds(session, `/dashboard/deposits?status=held&name=${name}&sort=newest`);
    expect(newest.ids).toEqual([...ids].reverse().slice(0, 50));
    const older = await listedIds(session, newest.next!);
    expect(older.ids).toEqual([...ids].reverse().slice(50));
  });

  test('when the held tab is narrowed to possible duplicates in the form, then only the same transfer seen twice is listed, under its reason in words', async () => {
    await world.merchant.createOrder({ amount: 6161, payer_name: 'リユウ ベツ', external_id: 'reason-a' });
    await world.merchant.createOrder({ amount: 6161, payer_name: 'リユウ ベツ', external_id: 'reason-b' });
    const several = await world.merchant.deposit(6161, 'リユウ ベツ');
    expect(several.decision.reason).toBe('several_orders_fit');
    const once = await world.merchant.deposit(6262, 'リユウ フタゴ');
    const twice = await world.merchant.deposit(6262, 'リユウ フタゴ');
    expect(twice.decision.reason).toBe('possible_duplicate');
    const page = await world.logIn('viewer');
    await page.goto(`${world.baseUrl}/dashboard/deposits`);

    await page.getByLabel('振込名義で検索').fill('リユウ');
    await page.getByLabel('保留の理由').selectOption({ label: '同じ日に同じ入金がもう一件ある（二重の可能性）' });
    await page.getByRole('button', { name: '検索' }).click();

    const rows = page.getByRole('table').getByRole('row');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).getByRole('link').first().getAttribute('href')).toBe(`/dashboard/deposits/${twice.id}`);
    expect(await rows.nth(1).innerText()).toContain('同じ口座・金額・名義・日の入金が先にあります');
    expect(await page.locator('main').innerText()).not.toContain(several.id);
    expect(once.id).not.toBe(twice.id);

    await page.getByLabel('保留の理由').selectOption({ label: 'すべての理由' });
    await page.getByRole('button', { name: '検索' }).click();
    expect(await rows.count()).toBe(3);
  });
});

describe('the order list', () => {
  test('when orders are listed oldest first, then the first taken comes first, and newest first stays the default', async () => {
    const older = await world.merchant.createOrder({ amount: 3131, payer_name: 'ジュンジョ チュウモン', external_id: 'order-older' });
    const newer = await world.merchant.createOrder({ amount: 3131, payer_name: 'ジュンジョ チュウモン', external_id: 'order-newer' });
    const session = await world.session('viewer');
    const orderIds = async (path: string) =>
      [...(await (await session.get(path)).text()).matchAll(/href="\/dashboard\/orders\/(ord_[A-Za-z0-9_]+)"/g)].map((m) => m[1]);

    expect(await orderIds(`/dashboard/orders?payer_name=${encodeURIComponent('ジュンジョ')}&sort=oldest`)).toEqual([older.id, newer.id]);
    expect(await orderIds(`/dashboard/orders?payer_name=${encodeURIComponent('ジュンジョ')}`)).toEqual([newer.id, older.id]);
  });
});

describe('near misses in the list', () => {
  test('when an unmatched deposit is short of an order of its name by a transfer fee, then its row in the unmatched list says so and links to the deposit', async () => {
    await world.merchant.createOrder({ amount: 5000, payer_name: 'コンドウ ミキ', external_id: 'near-5000' });
    const deposit = await world.merchant.deposit(4560, 'コンドウ ミキ');
    expect(deposit.status).toBe('unmatched');
    const page = await world.logIn('viewer', 'en-US');
    await page.goto(`${world.baseUrl}/dashboard/deposits?status=unmatched`);

    const row = page.getByRole('row').filter({ hasText: 'コンドウ ミキ' });
    const miss = row.getByRole('link', { name: '¥440 short of order near-5000 (transfer fee)' });
    await miss.click();

    await page.waitForURL(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);
    const ja = await world.logIn('viewer');
    await ja.goto(`${world.baseUrl}/dashboard/deposits?status=unmatched`);
    expect(await ja.getByRole('row').filter({ hasText: 'コンドウ ミキ' }).innerText()).toContain('注文 near-5000 より ¥440 少ない（振込手数料）');
  });
});

/** A CSV answer: its status, type, and its lines split into cells (quotes undone). */
async function csvOf(session: ConsoleSession, path: string): Promise<{ status: number; type: string | null; bom: boolean; rows: string[][] }> {
  const res = await session.get(path);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  const bom = text.startsWith('\uFEFF');
  const rows = (bom ? text.slice(1) : text)
    .split('\r\n')
    .filter((line) => line !== '')
    .map((line) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)].slice(0, -1).map((m) => m[1]!.replace(/^"|"$/g, '').replace(/""/g, '"')));
  return { status: res.status, type: res.headers.get('content-type'), bom, rows };
}

describe('CSV for the accountant', () => {
  test('when the unmatched list is downloaded, then the file is UTF-8 with a BOM in freee statement columns, the amount whole yen, the kana name as the bank printed it, and a name that starts like a formula neutralised', async () => {
    const kana = await world.merchant.deposit(7171, 'ｶ)ｴｸｾﾙ ｼｮｳｼﾞ');
    const formula = await world.merchant.deposit(7272, '=HYPERLINK("http://x.example/","ｸﾘｯｸ")');
    expect([kana.status, formula.status]).toEqual(['unmatched', 'unmatched']);
    const session = await world.session('viewer');

    const file = await csvOf(session, '/dashboard/deposits.csv?status=unmatched&amount=7171');
    expect(file.status).toBe(200);
    expect(file.type).toBe('text/csv; charset=utf-8');
    expect(file.bom).toBe(true);
    expect(file.rows[0]).toEqual(['取引日', '入出金額', '残高', '取引内容', '入金日時', '状態', '判定理由', '注文番号', '入金ID']);
    expect(file.rows).toHaveLength(2);
    const [day, amount, balance, name, , status, , , id] = file.rows[1]!;
    expect(day).toMatch(/^\d{4}\/\d{2}\/\d{2}$/);
    expect([amount, balance, name, status, id]).toEqual(['7171', '', 'ｶ)ｴｸｾﾙ ｼｮｳｼﾞ', '未消込', kana.id]);

    const neutralised = await csvOf(session, '/dashboard/deposits.csv?status=unmatched&amount=7272');
    expect(neutralised.rows[1]![3]).toBe(`'=HYPERLINK("http://x.example/","ｸﾘｯｸ")`);
  });

  test('when payments are downloaded, then each confirmed deposit comes with its order, and a name starting with @ is kept as text', async () => {
    const order = await world.merchant.createOrder({ amount: 8181, payer_name: '@ヤマダ ハナコ', external_id: 'csv-paid' });
    const deposit = await world.merchant.deposit(8181, '@ヤマダ ハナコ');
    expect(deposit.status).toBe('confirmed');
    const session = await world.session('viewer');

    const file = await csvOf(session, '/dashboard/payments.csv?status=confirmed&amount=8181');
    expect(file.rows[0]).toEqual(['取引日', '入出金額', '残高', '取引内容', '注文番号', '支払者名', '注文金額', '確定日時', '確定の理由', '入金ID', '注文ID']);
    expect(file.rows).toHaveLength(2);
    expect(file.rows[1]).toEqual([
      expect.stringMatching(/^\d{4}\/\d{2}\/\d{2}$/),
      '8181',
      '',
      "'@ヤマダ ハナコ",
      'csv-paid',
      "'@ヤマダ ハナコ",
      '8181',
      expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+09:00$/),
      '名義・金額が完全に一致',
      deposit.id,
      order.id,
    ]);
  });

  test('when the session is in live mode, then neither file holds a test-mode deposit, without a session there is no file, and the list links to both files with its filters', async () => {
    await world.merchant.createOrder({ amount: 9191, payer_name: 'モード ワケル', external_id: 'csv-mode' });
    await world.merchant.deposit(9191, 'モード ワケル');
    await world.merchant.deposit(9292, 'モード ワケル');
    const session = await world.session('viewer');
    expect((await csvOf(session, '/dashboard/deposits.csv?status=unmatched&name=モード')).rows).toHaveLength(2);
    expect((await csvOf(session, '/dashboard/payments.csv?name=モード')).rows).toHaveLength(2);

    expect((await session.post('/dashboard/mode', { mode: 'live' })).status).toBe(303);
    const live = await csvOf(session, '/dashboard/deposits.csv?status=unmatched&name=モード');
    const livePayments = await csvOf(session, '/dashboard/payments.csv?name=モード');
    expect(live.rows).toHaveLength(1);
    expect(livePayments.rows).toHaveLength(1);
    const anonymous = await fetch(`${world.baseUrl}/dashboard/payments.csv`, { redirect: 'manual' });
    expect([anonymous.status, anonymous.headers.get('location')]).toEqual([303, '/dashboard/login']);
    expect((await session.get('/dashboard/payments.csv')).headers.get('content-disposition')).toMatch(/^attachment; filename="payments-live-\d{8}\.csv"$/);

    const page = await world.logIn('viewer');
    await page.goto(`${world.baseUrl}/dashboard/deposits?status=unmatched&name=${encodeURIComponent('モード')}`);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'この一覧の入金（未消込）' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^deposits-unmatched-test-\d{8}\.csv$/);
    expect(new URL(file.url()).searchParams.get('name')).toBe('モード');
  });
});
