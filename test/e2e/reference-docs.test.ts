import { type Browser, type Page } from 'playwright-core';
import { TestSystem, api } from '@pmatch/testkit';
import { assertChromium, launchChromium } from './support/browser';

/**
 * The API reference at /docs, as an integrator opens it: in Debian's chromium, rendered by Redoc
 * from the document the API serves, with everything coming from the API's own origin.
 */

type Json = Record<string, any>;

let system: TestSystem;
let browser: Browser;
let document: Json;

beforeAll(async () => {
  assertChromium();
  system = await TestSystem.start();
  document = (await api(system.apiUrl, 'GET', '/v1/openapi.json')).body;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

interface Visit {
  page: Page;
  consoleErrors: string[];
  /** Every URL the page loaded (requests the CSP blocked never finish). */
  loaded: string[];
}

async function openDocs(): Promise<Visit> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const visit: Visit = { page, consoleErrors: [], loaded: [] };
  page.on('console', (message) => {
    if (message.type() === 'error' || message.text().includes('Content Security Policy')) visit.consoleErrors.push(message.text());
  });
  page.on('requestfinished', (request) => visit.loaded.push(request.url()));
  const response = await page.goto(`${system.apiUrl}/docs`);
  expect(response?.status()).toBe(200);
  await page.locator('[data-section-id^="operation/"]').first().waitFor();
  return visit;
}

const operationsOf = (section: Json) =>
  Object.values<Json>(section).flatMap((item) => ['get', 'post', 'patch', 'delete'].filter((m) => item[m]).map((m) => item[m] as Json));

async function renderedSections(page: Page): Promise<{ id: string | null; text: string }[]> {
  return page.$$eval('[data-section-id^="operation/"]', (sections) =>
    sections.map((s) => ({ id: s.getAttribute('data-section-id'), text: s.textContent ?? '' })),
  );
}

describe('/docs', () => {
  test('when /docs is opened, then every operation of the document is rendered with its summary', async () => {
    const { page } = await openDocs();
    expect(operationsOf(document.paths)).toHaveLength(33);

    const rendered = await renderedSections(page);

    for (const operation of operationsOf(document.paths)) {
      const section = rendered.find((s) => s.id === `operation/${operation.operationId}`);
      expect({ operation: operation.operationId, summary: section?.text.includes(operation.summary) }).toEqual({
        operation: operation.operationId,
        summary: true,
      });
    }
    await page.context().close();
  });

  test('when /docs is opened, then each webhook event type is rendered with its payload', async () => {
    const { page } = await openDocs();

    const rendered = await renderedSections(page);

    expect(operationsOf(document.webhooks)).toHaveLength(Object.keys(document.webhooks).length);
    for (const [type, item] of Object.entries<Json>(document.webhooks)) {
      const section = rendered.find((s) => s.id === `operation/${item.post.operationId}`);
      expect({ type, rendered: section?.text.includes(type) && section.text.includes('webhook-signature') }).toEqual({ type, rendered: true });
    }
    await page.context().close();
  });

  test("when /docs is opened, then everything loads from the API's origin and the Content-Security-Policy blocks only Redoc's CDN logo", async () => {
    const { page, consoleErrors, loaded } = await openDocs();
    // Search runs in a worker made from a blob: the one thing the policy allows besides our origin.
    await page.getByPlaceholder('Search...').fill('cancel');
    await page.locator('[data-role="search:results"]').getByText('Cancel an order').waitFor();

    const origins = new Set(loaded.filter((url) => !url.startsWith('blob:') && !url.startsWith('data:')).map((url) => new URL(url).origin));

    expect([...origins]).toEqual([system.apiUrl]);
    expect(loaded).toEqual(expect.arrayContaining([`${system.apiUrl}/docs/redoc.standalone.js`, `${system.apiUrl}/v1/openapi.json`]));
    expect(consoleErrors.filter((error) => !error.includes("'https://cdn.redoc.ly/redoc/logo-mini.svg'"))).toEqual([]);
    const headers = (await page.request.get(`${system.apiUrl}/docs`)).headers();
    expect(headers['content-security-policy']).toContain("default-src 'none'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    // The page shares its origin with the console: no inline style or script without this answer's nonce.
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(headers['content-security-policy']).toMatch(/style-src 'self' 'nonce-[A-Za-z0-9+/=]{24}'/);
    // Redoc's own styles carry this answer's nonce (the console errors above include every style the policy blocked).
    expect(await page.$$eval('style', (elements) => elements.filter((e) => (e as HTMLStyleElement).nonce !== '').length)).toBe(1);
    await page.context().close();
  });
});
