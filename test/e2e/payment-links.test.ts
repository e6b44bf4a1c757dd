import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { MerchantClient, TestSystem } from '@pmatch/testkit';
import { assertChromium, launchChromium } from './support/browser';

/**
 * Payment links: the API that makes, lists and deactivates them, and the page at which a buyer
 * orders (in Debian's chromium, driven by playwright-core, checked by axe-core), with the use
 * limit, the end of a link, modes and the per-address limit, against the real services.
 */

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const MINUTE = 60 * 1000;
/** Orders an address may make at links in a burst: each test orders from an address of its own. */
const ORDERS_PER_ADDRESS = 3;

let system: TestSystem;
let merchant: MerchantClient;
let orgId: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
let nextAmount = 71_000;
const amount = () => (nextAmount += 1);
/** A loopback address of its own for each test's posts (all of 127.0.0.0/8 reaches the service). */
let nextAddress = 10;
const freshAddress = () => `127.0.0.${(nextAddress += 1)}`;

beforeAll(async () => {
  assertChromium();
  system = await TestSystem.start({ PAYMENT_LINK_ORDERS_PER_HOUR: String(ORDERS_PER_ADDRESS) });
  ({ client: merchant, orgId } = await system.createMerchant());
  browser = await launchChromium();
});

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

async function createLink(body: Record<string, unknown> = {}, client = merchant): Promise<any> {
  const res = await client.request('POST', '/v1/payment-links', { amount: amount(), item_name: '限定セット', ...body });
  if (res.status !== 201) throw new Error(`link not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

interface FormAnswer {
  status: number;
  location: string | undefined;
  retryAfter: string | undefined;
  body: string;
}

/** Posts the link page's form as a browser would, from `localAddress`. */
function postForm(url: string, fields: Record<string, string>, localAddress: string): Promise<FormAnswer> {
  const body = new URLSearchParams(fields).toString();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            location: res.headers.location,
            retryAfter: res.headers['retry-after'] as string | undefined,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The preview step's attempt, as the page hands it to the browser. */
async function attemptFor(url: string, payerName: string, address: string): Promise<string> {
  const preview = await postForm(url, { step: 'preview', payer_name: payerName }, address);
  const attempt = /name="attempt" value="([0-9A-Za-z]+)"/.exec(preview.body)?.[1];
  if (preview.status !== 200 || attempt === undefined) throw new Error(`no preview: ${preview.status}`);
  return attempt;
}

/** Orders at a link in the two steps of its page; the answer of the second. */
async function orderAt(url: string, payerName: string, address: string): Promise<FormAnswer> {
  return postForm(url, { step: 'create', payer_name: payerName, attempt: await attemptFor(url, payerName, address) }, address);
}

async function orderOfPaymentPage(location: string): Promise<any> {
  const token = /^\/pay\/([0-9A-Za-z]{32})/.exec(location)?.[1];
  const [row] = await system.sql<{ id: string }>('SELECT id FROM orders WHERE payment_token = $1', [token]);
  return merchant.order(row!.id);
}

async function seriousViolations(page: Page): Promise<{ id: string; nodes: string[] }[]> {
  await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: (context: unknown) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }
    ).axe;
    return axe.run(document);
  });
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

async function openTab(locale = 'ja-JP'): Promise<{ page: Page; consoleErrors: string[] }> {
  const context = await browser.newContext({ ...PHONE, locale });
  contexts.push(context);
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  return { page, consoleErrors };
}

describe('a buyer at a payment link, in the browser', () => {
  test('when a buyer enters a name in hiragana, then the page shows it as the bank prints it, orders under it, and a deposit under that name confirms the order', async () => {
    const link = await createLink({ amount: 3000, item_name: '新米 2kg', metadata: { campaign: 'winter' } });
    const { page, consoleErrors } = await openTab();

    const opened = await page.goto(link.url);
    expect(opened?.status()).toBe(200);
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    expect(await page.locator('body').innerText()).toContain('新米 2kg');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('お振込みの名義（ご依頼人名）').fill('やまだ たろう');
    await page.getByRole('button', { name: '確認へ進む' }).click();

    expect(await page.locator('#payer-name-bank-form').innerText()).toBe('ﾔﾏﾀﾞ ﾀﾛｳ');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'この名義で注文する' }).click();
    await page.waitForURL(/\/pay\/[0-9A-Za-z]{32}/);

    const text = await page.locator('body').innerText();
    expect(text).toContain('お支払い待ち');
    expect(text).toContain('¥3,000');
    expect(text).toContain('ﾔﾏﾀﾞ ﾀﾛｳ');
    expect(consoleErrors).toEqual([]);
    const order = await orderOfPaymentPage(new URL(page.url()).pathname);
    expect(order).toMatchObject({
      status: 'open',
      amount: 3000,
      item_name: '新米 2kg',
      payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ',
      payer_name_bank_form: 'ﾔﾏﾀﾞ ﾀﾛｳ',
      payer_name_printable: true,
      source: 'payment_link',
      payment_link_id: link.id,
      metadata: { campaign: 'winter' },
      livemode: false,
      bank_account_id: link.bank_account_id,
    });
    const created = (await merchant.events('order.created')).find((e) => e.data.object.id === order.id);
    expect(created.data.object).toMatchObject({ source: 'payment_link', payment_link_id: link.id });

    const deposit = await merchant.deposit(3000, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(deposit).toMatchObject({ status: 'confirmed', order_id: order.id });
    await page.reload();
    expect(await page.locator('body').innerText()).toContain('お支払い済み');
    expect((await merchant.request('GET', `/v1/payment-links/${link.id}`)).body.use_count).toBe(1);
  });

  test('when a buyer enters kanji, then the page says banks cannot print it, in English too, and keeps what was typed', async () => {
    const link = await createLink();
    const { page } = await openTab('en-US');
    await page.goto(link.url);

    await page.getByLabel('Name you will transfer under').fill('山田 タロウ');
    await page.getByRole('button', { name: 'Continue' }).click();

    const error = await page.getByRole('alert').innerText();
    expect(error).toContain('Banks cannot print “山”, “田”');
    expect(await page.getByLabel('Name you will transfer under').inputValue()).toBe('山田 タロウ');
    expect(await page.getAttribute('#payer_name', 'aria-invalid')).toBe('true');
    expect(await seriousViolations(page)).toEqual([]);
    expect((await merchant.request('GET', `/v1/payment-links/${link.id}`)).body.use_count).toBe(0);
  });
});

describe('the payment link page', () => {
  test('when a name is empty, kanji or a katakana name is changed on the preview, then 400 with the reason or the form again, and nothing is stored', async () => {
    const link = await createLink();
    const address = freshAddress();

    const empty = await postForm(link.url, { step: 'preview', payer_name: '  ' }, address);
    const kanji = await postForm(link.url, { step: 'create', payer_name: '鈴木花子', attempt: 'A'.repeat(24) }, address);
    const edit = await postForm(link.url, { step: 'edit', payer_name: 'スズキ ハナコ' }, address);
    const katakana = await postForm(link.url, { step: 'preview', payer_name: 'スズキ　ハナコ' }, address);

    expect([empty.status, kanji.status, edit.status, katakana.status]).toEqual([400, 400, 200, 200]);
    expect(empty.body).toContain('お振込みの名義を入力してください');
    expect(kanji.body).toContain('「鈴」「木」「花」「子」 は銀行の振込名義に使えない文字です');
    expect(edit.body).toContain('value="スズキ ハナコ"');
    expect(katakana.body).toContain('ｽｽﾞｷ ﾊﾅｺ');
    expect(await system.sql('SELECT id FROM orders WHERE payment_link_id = $1', [link.id])).toEqual([]);
  });

  test('when the same attempt is posted twice, then both answers lead to one order and the link counts one use', async () => {
    const link = await createLink({ use_limit: 5 });
    const address = freshAddress();
    const attempt = await attemptFor(link.url, 'サトウ ジロウ', address);
    const fields = { step: 'create', payer_name: 'サトウ ジロウ', attempt };

    const [first, second] = await Promise.all([postForm(link.url, fields, address), postForm(link.url, fields, address)]);

    expect([first.status, second.status]).toEqual([303, 303]);
    expect(first.location).toBe(second.location);
    expect((await merchant.request('GET', `/v1/payment-links/${link.id}`)).body.use_count).toBe(1);
  });

  test('when more buyers order at once than the use limit allows, then exactly the limit get orders and the rest see the link used up', async () => {
    const link = await createLink({ use_limit: 2 });
    const names = ['アオキ イチロウ', 'イトウ ジロウ', 'ウエダ サブロウ', 'エンドウ シロウ'];
    const attempts = await Promise.all(names.map(async (name, i) => ({ name, attempt: await attemptFor(link.url, name, `127.0.1.${i + 1}`) })));

    const answers = await Promise.all(
      attempts.map(({ name, attempt }, i) => postForm(link.url, { step: 'create', payer_name: name, attempt }, `127.0.1.${i + 1}`)),
    );

    expect(answers.map((a) => a.status).sort()).toEqual([303, 303, 410, 410]);
    for (const refused of answers.filter((a) => a.status === 410)) expect(refused.body).toContain('受付数に達したため');
    const after = (await merchant.request('GET', `/v1/payment-links/${link.id}`)).body;
    expect(after).toMatchObject({ use_count: 2, use_limit: 2, status: 'used_up' });
    expect(await system.sql('SELECT id FROM orders WHERE payment_link_id = $1', [link.id])).toHaveLength(2);
    expect((await fetch(link.url)).status).toBe(410);
  });

  test('when a link is deactivated, then its page and its form refuse with 410, and deactivating again keeps the first moment', async () => {
    const link = await createLink();
    const address = freshAddress();
    const attempt = await attemptFor(link.url, 'タナカ ハナ', address);

    const deactivated = await merchant.request('POST', `/v1/payment-links/${link.id}/deactivate`);
    const again = await merchant.request('POST', `/v1/payment-links/${link.id}/deactivate`);
    const page = await fetch(link.url);
    const order = await postForm(link.url, { step: 'create', payer_name: 'タナカ ハナ', attempt }, address);

    expect(deactivated.status).toBe(200);
    expect(deactivated.body).toMatchObject({ status: 'deactivated', deactivated_at: expect.any(String) });
    expect(again.body.deactivated_at).toBe(deactivated.body.deactivated_at);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('このリンクは現在ご利用いただけません');
    expect(order.status).toBe(410);
    expect(await system.sql('SELECT id FROM orders WHERE payment_link_id = $1', [link.id])).toEqual([]);
  });

  test("when a link's end passes, then it reads expired and takes no order", async () => {
    const link = await createLink({ expires_at: new Date(system.now().getTime() + MINUTE).toISOString() });
    const address = freshAddress();
    const attempt = await attemptFor(link.url, 'ナカムラ ケン', address);

    system.advanceClock(2 * MINUTE);
    const order = await postForm(link.url, { step: 'create', payer_name: 'ナカムラ ケン', attempt }, address);

    expect(order.status).toBe(410);
    expect(order.body).toContain('受付期限を過ぎたため');
    expect((await merchant.request('GET', `/v1/payment-links/${link.id}`)).body).toMatchObject({ status: 'expired', use_count: 0 });
  });

  test('when one address orders more than its limit, then 429 with Retry-After, and another address still orders', async () => {
    const link = await createLink();
    const address = freshAddress();

    const answers: FormAnswer[] = [];
    for (let i = 0; i <= ORDERS_PER_ADDRESS; i += 1) answers.push(await orderAt(link.url, 'コバヤシ ユウ', address));
    const other = await orderAt(link.url, 'コバヤシ ユウ', freshAddress());

    expect(answers.map((a) => a.status)).toEqual([...Array(ORDERS_PER_ADDRESS).fill(303), 429]);
    expect(answers.at(-1)!.body).toContain('ご注文の回数が多すぎます');
    expect(Number(answers.at(-1)!.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(other.status).toBe(303);
    expect((await merchant.request('GET', `/v1/payment-links/${link.id}`)).body.use_count).toBe(ORDERS_PER_ADDRESS + 1);
  });

  test("when a token is unknown or malformed, then the not-found page; the page carries the payment page's policy with form-action 'self'", async () => {
    const link = await createLink();

    const pages = await Promise.all(
      [`${system.apiUrl}/link/${'0'.repeat(32)}`, `${system.apiUrl}/link/short`, `${system.apiUrl}/link`].map((url) => fetch(url)),
    );
    const policy = (await fetch(link.url)).headers.get('content-security-policy') ?? '';

    expect(pages.map((p) => p.status)).toEqual([404, 404, 404]);
    expect(policy.split(/;\s*/)).toEqual(expect.arrayContaining(["default-src 'none'", "form-action 'self'", "frame-ancestors 'none'"]));
    expect(policy).not.toContain('script-src');
  });
});

describe('the payment links API', () => {
  test('when a merchant uses @pmatch/client, then it creates, reads, lists every page of and deactivates links', async () => {
    const links = merchant.client.paymentLinks;
    const created = await links.create({ amount: amount(), item_name: 'クライアント経由', use_limit: 3 });

    const read = await links.retrieve(created.id);
    const all: string[] = [];
    for await (const link of links.listAll()) all.push(link.id);
    const deactivated = await links.deactivate(created.id);

    expect(read).toEqual(created);
    expect(all[0]).toBe(created.id);
    expect(new Set(all).size).toBe(all.length);
    expect(deactivated).toMatchObject({ id: created.id, status: 'deactivated' });
  });

  test('when a link is created, then it is answered, read and listed newest first with a cursor', async () => {
    const first = await createLink({ use_limit: 10 });
    const second = await createLink();

    const read = await merchant.request('GET', `/v1/payment-links/${first.id}`);
    const page1 = await merchant.request('GET', '/v1/payment-links?limit=1');
    const page2 = await merchant.request('GET', `/v1/payment-links?limit=1&starting_after=${second.id}`);

    expect(first).toMatchObject({
      object: 'payment_link',
      livemode: false,
      status: 'active',
      use_limit: 10,
      use_count: 0,
      expires_at: null,
      deactivated_at: null,
    });
    expect(first.url).toMatch(new RegExp(`^${system.apiUrl}/link/[0-9A-Za-z]{32}$`));
    expect(read.body).toEqual(first);
    expect(page1.body).toMatchObject({ object: 'list', has_more: true, data: [{ id: second.id }] });
    expect(page2.body.data[0].id).toBe(first.id);
  });

  test('when a create is invalid, then 400 with the parameter named and nothing stored', async () => {
    const before = await system.sql('SELECT id FROM payment_links');
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ amount: 0, item_name: 'x' }, 400, 'parameter_invalid', 'amount'],
      [{ amount: 1.5, item_name: 'x' }, 400, 'parameter_invalid', 'amount'],
      [{ amount: 100 }, 400, 'parameter_missing', 'item_name'],
      [{ amount: 100, item_name: 'x', use_limit: 0 }, 400, 'parameter_invalid', 'use_limit'],
      [{ amount: 100, item_name: 'x', expires_at: new Date(system.now().getTime() - MINUTE).toISOString() }, 400, 'parameter_invalid', 'expires_at'],
      [{ amount: 100, item_name: 'x', bank_account_id: 'ba_000000000000000000000000' }, 400, 'parameter_invalid', 'bank_account_id'],
      [{ amount: 100, item_name: 'x', price: 1 }, 400, 'parameter_unknown', 'price'],
    ];

    const answers = await Promise.all(cases.map(([body]) => merchant.request('POST', '/v1/payment-links', body)));

    expect(answers.map((a) => [a.status, a.body.error.code, a.body.error.param])).toEqual(cases.map(([, status, code, param]) => [status, code, param]));
    expect(await system.sql('SELECT id FROM payment_links')).toEqual(before);
  });

  test('when a read-only key creates a link or ids are unknown, then 403 and 404', async () => {
    const readOnly = new MerchantClient(
      system.apiUrl,
      String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'test', '--name', 'ro', '--permission', 'read_only')).key),
    );

    const create = await readOnly.request('POST', '/v1/payment-links', { amount: 100, item_name: 'x' });
    const unknown = await merchant.request('GET', `/v1/payment-links/plink_${'0'.repeat(24)}`);
    const malformed = await merchant.request('POST', '/v1/payment-links/nope/deactivate');
    const badCursor = await merchant.request('GET', `/v1/payment-links?starting_after=plink_${'0'.repeat(24)}`);

    expect([create.status, create.body.error.code]).toEqual([403, 'insufficient_scope']);
    expect([unknown.status, malformed.status, badCursor.status]).toEqual([404, 404, 400]);
  });

  test("when a live key and a test key each make links, then neither sees the other's, and a live link makes live orders", async () => {
    await system.addLiveBankAccount(orgId, { bank: '0005', branch: '123', number: '7654321', holder: 'ﾔﾏﾀﾞｼﾖｳﾃﾝ' });
    const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'live')).key));
    const testLink = await createLink();
    const liveLink = await createLink({}, live);

    const crossed = await Promise.all([
      live.request('GET', `/v1/payment-links/${testLink.id}`),
      merchant.request('GET', `/v1/payment-links/${liveLink.id}`),
      live.request('POST', `/v1/payment-links/${testLink.id}/deactivate`),
    ]);
    const liveList = await live.request('GET', '/v1/payment-links?limit=100');
    const ordered = await orderAt(liveLink.url, 'ヤマダ ハナコ', freshAddress());

    expect(liveLink.livemode).toBe(true);
    expect(crossed.map((r) => r.status)).toEqual([404, 404, 404]);
    expect(liveList.body.data.map((l: { id: string }) => l.id)).toEqual([liveLink.id]);
    expect(ordered.status).toBe(303);
    const [order] = await system.sql<{ id: string; mode: string }>('SELECT id, mode FROM orders WHERE payment_link_id = $1', [liveLink.id]);
    expect(order!.mode).toBe('live');
    expect((await merchant.request('GET', `/v1/orders/${order!.id}`)).status).toBe(404);
    expect((await live.request('GET', `/v1/orders/${order!.id}`)).body).toMatchObject({ livemode: true, source: 'payment_link', payment_link_id: liveLink.id });
  });
});

describe('orders whose payer name no bank prints', () => {
  test('when an order is created with a kanji payer name, then it is flagged, its page says what to do, and its deposit is held for the seller', async () => {
    const order = await merchant.createOrder({ amount: 8800, payer_name: '山田太郎' });

    const page = await fetch(`${order.payment_url}?lang=en`).then((r) => r.text());
    const japanese = await fetch(order.payment_url).then((r) => r.text());
    const deposit = await merchant.deposit(8800, 'ﾔﾏﾀﾞ ﾀﾛｳ');

    expect(order).toMatchObject({ payer_name: '山田太郎', payer_name_bank_form: null, payer_name_printable: false, source: null, payment_link_id: null });
    expect(page).toContain('characters banks cannot print');
    expect(page).toContain('held until the shop confirms it');
    expect(japanese).toContain('お店が確認するまで保留');
    expect(deposit).toMatchObject({ status: 'held', candidate_order_ids: [order.id] });
  });

  test("when an order's payer name is in full-width katakana, then it carries its bank form and the page asks for that form", async () => {
    const order = await merchant.createOrder({ payer_name: 'カブシキガイシャ ヤマダ' });

    const page = await fetch(order.payment_url).then((r) => r.text());

    expect(order).toMatchObject({ payer_name_bank_form: 'ｶ)ﾔﾏﾀﾞ', payer_name_printable: true });
    expect(page).toContain('ｶ)ﾔﾏﾀﾞ');
    expect(page).toContain('ご注文時のお名前「カブシキガイシャ ヤマダ」');
  });
});
