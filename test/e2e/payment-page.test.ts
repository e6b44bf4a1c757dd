import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { MerchantClient, TestSystem } from '@pmatch/testkit';
import { assertChromium, launchChromium } from './support/browser';

/**
 * The buyer's payment page at payment_url, as a buyer sees it: in Debian's chromium, driven by
 * playwright-core (which never downloads a browser; scripts/ensure-chromium.sh installs it).
 */

/** Most buyers open the link from a shop's e-mail on their phone. */
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const MINUTE = 60 * 1000;
/** 2099-12-31 23:59:59 in Japan, a Thursday; the seconds must not show. */
const FAR_DEADLINE = '2099-12-31T14:59:59.000Z';

let system: TestSystem;
let merchant: MerchantClient;
let orgId: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  assertChromium();
  system = await TestSystem.start();
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

interface BuyerTab {
  page: Page;
  /** alert/confirm/prompt messages the page tried to show. */
  dialogs: string[];
  /** Console errors, where the browser reports anything the Content-Security-Policy blocked. */
  consoleErrors: string[];
}

/** A fresh browser profile on a phone; `locale` sets the language the browser asks for. */
async function openTab(locale = 'ja-JP'): Promise<BuyerTab> {
  const context = await browser.newContext({ ...PHONE, locale });
  contexts.push(context);
  const page = await context.newPage();
  const tab: BuyerTab = { page, dialogs: [], consoleErrors: [] };
  page.on('dialog', (dialog) => {
    tab.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error') tab.consoleErrors.push(message.text());
  });
  return tab;
}

async function visibleText(page: Page): Promise<string> {
  return page.locator('body').innerText();
}

async function bankAccountOf(order: { bank_account_id: string }) {
  const [account] = await system.sql<{
    bank_name: string;
    bank_code: string;
    branch_name: string;
    branch_code: string;
    account_number: string;
    holder_name: string;
  }>('SELECT bank_name, bank_code, branch_name, branch_code, account_number, holder_name FROM bank_accounts WHERE id = $1', [order.bank_account_id]);
  return account!;
}

async function fetchPage(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

describe('payment page: what the buyer sees', () => {
  test("when a buyer opens a test order's page, then it shows amount, item, bank account, name to pay under, deadline, awaiting status and the test banner", async () => {
    const order = await merchant.createOrder({ amount: 12800, item_name: 'お米 5kg', payer_name: 'ヤマダ タロウ', expires_at: FAR_DEADLINE });
    const account = await bankAccountOf(order);
    const { page, consoleErrors } = await openTab();

    const response = await page.goto(order.payment_url);

    expect(response?.status()).toBe(200);
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    const text = await visibleText(page);
    expect(text).toContain('¥12,800');
    expect(text).toContain('お米 5kg');
    expect(text).toContain(`${account.bank_name} (${account.bank_code})`);
    expect(text).toContain(`${account.branch_name} (${account.branch_code})`);
    expect(text).toContain('普通');
    expect(text).toContain(account.account_number);
    expect(text).toContain(account.holder_name);
    expect(text).toContain('ヤマダ タロウ');
    expect(text).toContain('2099年12月31日（木）23:59（日本時間）');
    expect(text).toContain('お支払い待ち');
    expect(await page.getByText('テストモード — 実際の入金は発生しません').isVisible()).toBe(true);
    // The page's style sheet and icon are allowed by its own policy: nothing was blocked.
    expect(consoleErrors).toEqual([]);
    expect(await page.locator('main').evaluate((main) => getComputedStyle(main).maxWidth)).not.toBe('none');
  });

  test('when the buyer asks for English with ?lang=en, then the page is in English, and its link switches back to Japanese', async () => {
    const order = await merchant.createOrder({ amount: 12800, item_name: 'お米 5kg', expires_at: FAR_DEADLINE });
    const account = await bankAccountOf(order);
    const { page } = await openTab('ja-JP');

    await page.goto(`${order.payment_url}?lang=en`);

    expect(await page.getAttribute('html', 'lang')).toBe('en');
    const text = await visibleText(page);
    expect(text).toContain('Awaiting payment');
    expect(text).toContain('¥12,800');
    expect(text).toContain('Ordinary (普通)');
    expect(text).toContain(account.account_number);
    expect(text).toContain('Thu, 31 Dec 2099, 23:59 (Japan time)');
    expect(await page.getByText('TEST MODE — no real money moves').isVisible()).toBe(true);

    await page.getByRole('link', { name: '日本語' }).click();

    expect(new URL(page.url()).pathname).toBe(new URL(order.payment_url).pathname);
    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    expect(await visibleText(page)).toContain('お支払い待ち');
  });

  test('when the browser prefers English and no lang is given, then the page is in English', async () => {
    const order = await merchant.createOrder();
    const { page } = await openTab('en-US');

    await page.goto(order.payment_url);

    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await visibleText(page)).toContain('Awaiting payment');
  });

  test('when Accept-Language names Japanese and English with weights, then the heavier wins and Japanese is the default', async () => {
    const order = await merchant.createOrder();
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'ja'],
      ['fr-FR,fr;q=0.9', 'ja'],
      ['en-US,en;q=0.9,ja;q=0.8', 'en'],
      ['ja,en;q=0.5', 'ja'],
      ['en;q=0.3, ja;q=0.7', 'ja'],
      ['fr, en-GB;q=0.2', 'en'],
    ];

    const chosen = await Promise.all(
      cases.map(async ([acceptLanguage]) => {
        const res = await fetchPage(order.payment_url, acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage });
        return res.body.match(/<html lang="(\w+)">/)?.[1];
      }),
    );

    expect(chosen).toEqual(cases.map(([, language]) => language));
  });

  test('when a test deposit confirms the order, then a reload shows payment received and no longer invites a transfer', async () => {
    const order = await merchant.createOrder({ amount: 4800 });
    const account = await bankAccountOf(order);
    const { page } = await openTab();
    await page.goto(order.payment_url);
    expect(await visibleText(page)).toContain('お支払い待ち');

    const deposit = await merchant.deposit(4800, order.payer_name);
    expect(deposit.status).toBe('confirmed');
    await page.reload();

    const text = await visibleText(page);
    expect(text).toContain('お支払い済み');
    expect(text).toContain('お支払いを確認しました');
    expect(text).toContain('¥4,800');
    expect(text).not.toContain(account.account_number);
  });

  test('when an order is canceled, paid outside, or open past its deadline, then the page says so and shows no account', async () => {
    const canceled = await merchant.createOrder({ amount: 5100 });
    expect((await merchant.request('POST', `/v1/orders/${canceled.id}/cancel`)).status).toBe(200);
    const paidOutside = await merchant.createOrder({ amount: 5200 });
    expect((await merchant.request('POST', `/v1/orders/${paidOutside.id}/mark-paid`)).status).toBe(200);
    const pastDeadline = await merchant.createOrder({ amount: 5300, expires_at: new Date(system.now().getTime() + MINUTE).toISOString() });
    const account = await bankAccountOf(canceled);

    system.advanceClock(2 * MINUTE);
    const pages = await Promise.all([canceled, paidOutside, pastDeadline].map((order) => fetchPage(`${order.payment_url}?lang=en`)));

    expect(pages.map((p) => p.status)).toEqual([200, 200, 200]);
    const [canceledPage, paidOutsidePage, pastDeadlinePage] = pages.map((p) => p.body);
    expect(canceledPage).toContain('This order has been canceled');
    expect(paidOutsidePage).toContain('Payment received');
    expect(pastDeadlinePage).toContain('The payment deadline has passed');
    for (const body of pages.map((p) => p.body)) expect(body).not.toContain(account.account_number);
  });
});

describe('payment page: live orders', () => {
  test("when a buyer opens a live order's page, then it shows the order and no test banner, in Japanese or English", async () => {
    await system.addLiveBankAccount(orgId, { bank: '0005', branch: '123', number: '7654321', holder: 'ﾔﾏﾀﾞｼﾖｳﾃﾝ' });
    const live = new MerchantClient(system.apiUrl, String((await system.ops('key', 'issue', '--org', orgId, '--mode', 'live', '--name', 'live')).key));
    const order = await live.createOrder({ amount: 12900, item_name: '本番の品', expires_at: FAR_DEADLINE });
    expect(order.livemode).toBe(true);
    const { page } = await openTab();

    await page.goto(order.payment_url);
    const japanese = await visibleText(page);
    await page.goto(`${order.payment_url}?lang=en`);
    const english = await visibleText(page);

    expect(japanese).toContain('¥12,900');
    expect(japanese).toContain('本番の品');
    expect(japanese).toContain('7654321');
    expect(english).toContain('Awaiting payment');
    expect(japanese).not.toContain('テストモード');
    expect(english).not.toContain('TEST MODE');
    expect(await page.locator('.test-banner').count()).toBe(0);
  });
});

describe('payment page: hostile content', () => {
  test('when the item and payer names contain markup, then it shows as text and nothing runs', async () => {
    const order = await merchant.createOrder({
      item_name: '<script>alert(1)</script>',
      payer_name: '"><img src=x onerror=alert(2)>',
    });
    const { page, dialogs } = await openTab();

    await page.goto(order.payment_url);

    expect(await page.getByText('<script>alert(1)</script>').isVisible()).toBe(true);
    expect(await page.getByText('"><img src=x onerror=alert(2)>').isVisible()).toBe(true);
    expect(await page.locator('script, img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });
});

describe('payment page: addresses without an order', () => {
  test('when the token is unknown or malformed, then every such address gets the same 404 page', async () => {
    const order = await merchant.createOrder();
    const base = system.apiUrl;
    const wellFormedUnknown = `${base}/pay/${'0'.repeat(32)}`;
    const addresses = [wellFormedUnknown, `${base}/pay/short`, `${base}/pay/%ZZ`, `${order.payment_url}/more`, `${base}/pay`];

    const pages = await Promise.all(addresses.map((url) => fetchPage(url)));

    expect(pages.map((p) => p.status)).toEqual(addresses.map(() => 404));
    expect(pages.map((p) => p.headers.get('content-type'))).toEqual(addresses.map(() => 'text/html; charset=utf-8'));
    expect(new Set(pages.map((p) => p.body)).size).toBe(1);
    expect(pages[0]!.body).toContain('ページが見つかりません');
  });

  test('when a buyer opens an unknown token in the browser, then the page says it was not found', async () => {
    const { page } = await openTab('en-US');

    const response = await page.goto(`${system.apiUrl}/pay/${'0'.repeat(32)}`);

    expect(response?.status()).toBe(404);
    expect(await visibleText(page)).toContain('Page not found');
  });
});

describe('payment page: security headers', () => {
  test('when the page or its 404 is served, then it carries the security headers and no CORS headers', async () => {
    const order = await merchant.createOrder();
    const origin = { origin: 'https://attacker.example' };

    const pages = await Promise.all([fetchPage(order.payment_url, origin), fetchPage(`${system.apiUrl}/pay/${'0'.repeat(32)}`, origin)]);

    for (const { headers } of pages) {
      const policy = headers.get('content-security-policy') ?? '';
      expect(policy.split(/;\s*/)).toEqual(
        expect.arrayContaining([
          "default-src 'none'",
          expect.stringMatching(/^style-src 'sha256-[A-Za-z0-9+/]+=*'$/),
          "img-src 'self' data:",
          "base-uri 'none'",
          "form-action 'none'",
          "frame-ancestors 'none'",
        ]),
      );
      expect(policy).not.toContain('script-src');
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('referrer-policy')).toBe('no-referrer');
      expect(headers.get('x-frame-options')).toBe('DENY');
      expect(headers.get('cache-control')).toBe('no-store');
      expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect([...headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
  });
});
