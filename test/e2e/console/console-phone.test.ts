import type { Page } from 'playwright-core';
import { codeAt } from '../../../services/orders-api/src/domain/totp';
import { Console, PASSWORD, addPerson, axeViolations, delivered, webhookEndpoint } from './support';

/**
 * Every console page on a phone (390×844), in Japanese and in English: the page never scrolls
 * sideways (a wide table scrolls inside its own labelled, focusable box), no cell squeezes its
 * text to a character a line, every button is within the screen, and axe-core finds nothing.
 */

let world: Console;
let pages: [string, string][] = [];

beforeAll(async () => {
  world = await Console.start();
  const endpoint = await webhookEndpoint(world, '/phone');
  const open = await world.merchant.createOrder({
    amount: 12800,
    payer_name: 'ヤマダ タロウ',
    item_name: 'お米 5kg（玄米・特別栽培）',
    external_id: 'EC-2001',
  });
  await world.merchant.createOrder({ amount: 3980, payer_name: 'サトウ ハナコ', external_id: 'EC-2002' });
  await world.merchant.createOrder({ amount: 3980, payer_name: 'サトウ ハナコ', external_id: 'EC-2003' });
  const held = await world.merchant.deposit(3980, 'ｻﾄｳ ﾊﾅｺ');
  const paid = await world.merchant.createOrder({ amount: 5400, payer_name: 'スズキ イチロウ', external_id: 'EC-2004' });
  await world.merchant.deposit(5400, 'スズキ イチロウ');
  await world.merchant.deposit(2500, 'ﾌﾒｲ ﾆｭｳｷﾝ');
  await world.merchant.createOrder({ amount: 7301, payer_name: 'オボエ ハナコ', external_id: 'EC-2005' });
  const taught = await world.merchant.deposit(7301, 'ｵﾎﾞｴ ﾀﾛｳ');
  await delivered(world, '/phone', 'order.paid', paid.id);
  const event = (await world.merchant.events('order.paid'))[0];

  const operator = await world.logIn('operator');
  await operator.goto(`${world.baseUrl}/dashboard/deposits/${taught.id}`);
  await operator.getByRole('checkbox', { name: /支払者として覚える/ }).check();
  await operator
    .getByRole('button', { name: /この注文で確定/ })
    .first()
    .click();
  await operator.getByRole('status').waitFor();
  const alias = (await world.merchant.request('GET', '/v1/payer-aliases')).body.data[0] as { id: string };
  const key = (await world.system.ops('key', 'issue', '--org', world.orgId, '--mode', 'test', '--name', 'phone')) as { id: string };

  await world.closePages();

  pages = [
    ['overview', '/dashboard/'],
    ['deposits', '/dashboard/deposits'],
    ['deposits-unmatched', '/dashboard/deposits?status=unmatched'],
    ['deposit-held', `/dashboard/deposits/${held.id}?find=1`],
    ['deposit-confirmed', `/dashboard/deposits/${taught.id}`],
    ['deposits-bulk', '/dashboard/deposits/bulk-confirm'],
    ['payer-aliases', '/dashboard/payer-aliases'],
    ['payer-alias-forget', `/dashboard/payer-aliases/${alias.id}/forget`],
    ['orders', '/dashboard/orders'],
    ['order', `/dashboard/orders/${paid.id}`],
    ['order-open', `/dashboard/orders/${open.id}`],
    ['order-reverse', `/dashboard/orders/${paid.id}/reverse`],
    ['order-edit', `/dashboard/orders/${open.id}/edit`],
    ['events', '/dashboard/events'],
    ['event', `/dashboard/events/${event.id}`],
    ['webhooks', '/dashboard/webhooks'],
    ['webhook', `/dashboard/webhooks/${endpoint.id}`],
    ['webhook-delete', `/dashboard/webhooks/${endpoint.id}/delete`],
    ['webhook-rotate', `/dashboard/webhooks/${endpoint.id}/rotate-secret`],
    ['api-keys', '/dashboard/api-keys'],
    ['api-key-revoke', `/dashboard/api-keys/${key.id}/revoke`],
    ['settings', '/dashboard/settings'],
    ['dedicated-accounts', '/dashboard/settings/dedicated-accounts'],
    ['team', '/dashboard/team'],
    ['team-remove', `/dashboard/team/${world.people.viewer.id}/remove`],
    ['team-reset', `/dashboard/team/${world.people.viewer.id}/reset`],
    ['audit', '/dashboard/audit'],
    ['account', '/dashboard/account'],
    ['not-found', '/dashboard/orders/ord_doesnotexist'],
  ];
});
afterAll(async () => {
  await world?.stop();
});

interface Problems {
  page: string;
  overflow?: number;
  squeezed?: string[];
  offscreen?: string[];
  violations?: { id: string; impact: string; nodes: string[] }[];
}

async function problemsOn(page: Page, name: string): Promise<Problems> {
  const layout = await page.evaluate(() => {
    const root = document.documentElement;
    const inScrollBox = (el: Element) => el.closest('.table-wrap') !== null;
    const squeezed = [...document.querySelectorAll('td, th, dd, dt, button, a, label, h1, h2, p, li')]
      .filter((el) => {
        const text = (el as HTMLElement).innerText?.trim() ?? '';
        const box = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        const em = parseFloat(style.fontSize);
        const line = parseFloat(style.lineHeight) || 1.5 * em;
        // Narrow and broken over lines: a word or name set a character or two a line.
        return text.length > 3 && box.width > 0 && box.width < 2.5 * em && box.height > 1.5 * line;
      })
      .map((el) => (el as HTMLElement).innerText.trim().slice(0, 30));
    const offscreen = [...document.querySelectorAll('button, input[type=submit], a.button')]
      .filter((el) => !inScrollBox(el) && !(el as HTMLElement).hidden && el.getBoundingClientRect().width > 0)
      .filter((el) => {
        const box = el.getBoundingClientRect();
        return box.left < 0 || box.right > root.clientWidth;
      })
      .map((el) => (el as HTMLElement).innerText.trim().slice(0, 30));
    // What sticks out, innermost first, to say where an overflow comes from.
    const wide = [...document.querySelectorAll('main *')]
      .filter((el) => !inScrollBox(el) && el.getBoundingClientRect().right > root.clientWidth + 1)
      .reverse()
      .slice(0, 3)
      .map((el) => `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className)}` : ''} ${((el as HTMLElement).innerText ?? '').trim().slice(0, 30)}`);
    return { overflow: root.scrollWidth - root.clientWidth, squeezed, offscreen, wide };
  });
  const violations = await axeViolations(page);
  const found: Problems = { page: name };
  if (layout.overflow > 0) Object.assign(found, { overflow: layout.overflow, wide: layout.wide });
  if (layout.squeezed.length > 0) found.squeezed = layout.squeezed;
  if (layout.offscreen.length > 0) found.offscreen = layout.offscreen;
  if (violations.length > 0) found.violations = violations;
  return found;
}

for (const language of ['ja', 'en'] as const) {
  test(`when every console page is opened on a 390 px phone in ${language === 'ja' ? 'Japanese' : 'English'}, then none scrolls sideways, squeezes a name or hides a button, and axe-core finds no violation`, async () => {
    const page = await world.logIn('admin');
    await page.setViewportSize({ width: 390, height: 844 });
    const found: Problems[] = [];
    const login = await world.newPage();
    await login.setViewportSize({ width: 390, height: 844 });
    for (const [name, path] of [
      ['login', '/dashboard/login'],
      ['forgot', '/dashboard/password/forgot'],
    ]) {
      await login.goto(`${world.baseUrl}${path}?lang=${language}`);
      found.push(await problemsOn(login, name!));
    }
    for (const [name, path] of pages) {
      await page.goto(`${world.baseUrl}${path}${path.includes('?') ? '&' : '?'}lang=${language}`);
      found.push(await problemsOn(page, name));
    }
    // A new key, shown once on the page the issuing form redirects to.
    await page.goto(`${world.baseUrl}/dashboard/api-keys?lang=${language}`);
    await page.locator('input[name="name"]').fill(`phone-${language}`);
    await page.locator('form[action="/dashboard/api-keys"] button[type="submit"]').click();
    await page.waitForURL(/\/dashboard\/api-keys\/issued\//);
    expect(await page.locator('#key-text').innerText()).toMatch(/^svc_test_/);
    found.push(await problemsOn(page, 'api-key-issued'));
    const viewer = await world.logIn('viewer');
    await viewer.setViewportSize({ width: 390, height: 844 });
    const refused = await viewer.goto(`${world.baseUrl}/dashboard/audit?lang=${language}`);
    expect(refused?.status()).toBe(403);
    found.push(await problemsOn(viewer, 'forbidden'));

    expect(found.filter((f) => Object.keys(f).length > 1)).toEqual([]);
    expect(found).toHaveLength(pages.length + 4);
  });
}

/** A fresh browser profile on a phone, logged in with the password alone (up to a second factor's form, if the person has one). */
async function phoneLogIn(email: string, locale: string): Promise<Page> {
  const page = await world.newPage(locale);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${world.baseUrl}/dashboard/login`);
  await page.locator('input[name="email"]').fill(email);
  await page.locator('input[name="password"]').fill(PASSWORD);
  await page.locator('form[action="/dashboard/login"] button[type="submit"]').click();
  await page.waitForURL(/\/dashboard\/(login\/second-factor)?$/);
  return page;
}

for (const language of ['ja', 'en'] as const) {
  test(`when a person turns a second factor on, logs in with it and has their access reset, on a 390 px phone in ${language === 'ja' ? 'Japanese' : 'English'}, then the QR code, the recovery codes, the code's log-in, the reset link and the password set-up fit and axe-core finds nothing`, async () => {
    const locale = language === 'ja' ? 'ja-JP' : 'en-US';
    const person = await addPerson(world.system, world.orgId, 'operator', `phone-factor-${language}@example.com`);
    const found: Problems[] = [];

    const page = await phoneLogIn(person.email, locale);
    await page.goto(`${world.baseUrl}/dashboard/account`);
    await page.locator('form[action="/dashboard/account/totp/start"] input[name="password"]').fill(PASSWORD);
    await page.locator('form[action="/dashboard/account/totp/start"] button[type="submit"]').click();
    const secret = await page.locator('#totp-secret').innerText();
    found.push(await problemsOn(page, 'second-factor-qr'));
    world.system.advanceClock(30_000);
    await page.locator('form[action="/dashboard/account/totp/confirm"] input[name="code"]').fill(codeAt(secret, world.system.now()));
    await page.locator('form[action="/dashboard/account/totp/confirm"] button[type="submit"]').click();
    expect(await page.locator('#recovery-codes code').count()).toBe(10);
    found.push(await problemsOn(page, 'recovery-codes'));

    const waiting = await phoneLogIn(person.email, locale);
    expect(new URL(waiting.url()).pathname).toBe('/dashboard/login/second-factor');
    found.push(await problemsOn(waiting, 'second-factor-log-in'));

    const admin = await world.logIn('admin', locale);
    await admin.setViewportSize({ width: 390, height: 844 });
    await admin.goto(`${world.baseUrl}/dashboard/team/${person.id}/reset`);
    await admin.locator(`form[action="/dashboard/team/${person.id}/reset"] button[type="submit"]`).click();
    await admin.waitForURL(/\/dashboard\/team\/reset-link\//);
    const setupUrl = (await admin.locator('#setup-url').innerText()).trim();
    found.push(await problemsOn(admin, 'reset-link'));

    const setup = await world.newPage(locale);
    await setup.setViewportSize({ width: 390, height: 844 });
    await setup.goto(setupUrl);
    await setup.locator('input[name="password_again"]').waitFor();
    found.push(await problemsOn(setup, 'password-set-up'));

    expect(found.filter((f) => Object.keys(f).length > 1)).toEqual([]);
    expect(found).toHaveLength(5);
  });
}
