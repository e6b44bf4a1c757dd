import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Page } from 'playwright-core';
import { REPO_ROOT } from '@pmatch/testkit';
import { Console, axeViolations, delivered, webhookEndpoint } from './support';

/**
 * Every console page, in Japanese (the deposits and a held deposit also on a 390 px phone), checked by axe-core (every violation, of any impact), and
 * photographed. With UPDATE_CONSOLE_SCREENSHOTS=1 the pictures replace those in docs/console/
 * (shown by docs/console.md); otherwise they go to a temporary folder.
 */
const SHOTS = process.env.UPDATE_CONSOLE_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'console') : join(tmpdir(), 'pmatch-console-shots');

let world: Console;
const seen: { name: string; violations: Awaited<ReturnType<typeof axeViolations>> }[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  world = await Console.start();
});
afterAll(async () => {
  await world?.stop();
});

async function check(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  seen.push({ name, violations: await axeViolations(page) });
}

test('when every console page is opened, then axe-core finds no violation of any impact on any of them', async () => {
  const endpoint = await webhookEndpoint(world, '/pages');
  const open = await world.merchant.createOrder({ amount: 12800, payer_name: 'ヤマダ タロウ', item_name: 'お米 5kg', external_id: 'EC-1001' });
  await world.merchant.createOrder({ amount: 3980, payer_name: 'サトウ ハナコ', external_id: 'EC-1002' });
  await world.merchant.createOrder({ amount: 3980, payer_name: 'サトウ ハナコ', external_id: 'EC-1003' });
  const held = await world.merchant.deposit(3980, 'ｻﾄｳ ﾊﾅｺ');
  const paidOrder = await world.merchant.createOrder({ amount: 5400, payer_name: 'スズキ イチロウ', external_id: 'EC-1004' });
  await world.merchant.deposit(5400, 'スズキ イチロウ');
  await world.merchant.deposit(2500, 'ﾌﾒｲ ﾆｭｳｷﾝ');
  await delivered(world, '/pages', 'order.paid', paidOrder.id);
  const event = (await world.merchant.events('order.paid'))[0];

  const loggedOut = await world.newPage();
  await loggedOut.goto(`${world.baseUrl}/dashboard/login`);
  await check(loggedOut, 'login');

  const page = await world.logIn('admin');
  const pages: [string, string][] = [
    ['overview', '/dashboard/'],
    ['deposits', '/dashboard/deposits'],
    ['deposits-unmatched', '/dashboard/deposits?status=unmatched'],
    ['deposit-held', `/dashboard/deposits/${held.id}?find=1`],
    ['payer-aliases', '/dashboard/payer-aliases'],
    ['deposits-bulk', '/dashboard/deposits/bulk-confirm'],
    ['orders', '/dashboard/orders'],
    ['order', `/dashboard/orders/${paidOrder.id}`],
    ['order-reverse', `/dashboard/orders/${paidOrder.id}/reverse`],
    ['order-edit', `/dashboard/orders/${open.id}/edit`],
    ['events', '/dashboard/events'],
    ['event', `/dashboard/events/${event.id}`],
    ['webhooks', '/dashboard/webhooks'],
    ['webhook', `/dashboard/webhooks/${endpoint.id}`],
    ['api-keys', '/dashboard/api-keys'],
    ['settings', '/dashboard/settings'],
    ['dedicated-accounts', '/dashboard/settings/dedicated-accounts'],
    ['team', '/dashboard/team'],
    ['audit', '/dashboard/audit'],
    ['account', '/dashboard/account'],
  ];
  for (const [name, path] of pages) {
    const response = await page.goto(`${world.baseUrl}${path}`);
    expect([name, response?.status()]).toEqual([name, 200]);
    await check(page, name);
  }
  await page.goto(`${world.baseUrl}/dashboard/settings`);
  await page.getByRole('checkbox', { name: /カナ・全角半角の違い/ }).check();
  await page.getByRole('button', { name: '変更の影響を確認' }).click();
  await check(page, 'settings-preview');
  await page.goto(`${world.baseUrl}/dashboard/api-keys`);
  await page.getByLabel('名前').fill('受注システム');
  await page.getByRole('button', { name: 'APIキーを発行' }).click();
  await check(page, 'api-key-issued');
  await page.goto(`${world.baseUrl}/dashboard/orders?lang=en`);
  await check(page, 'orders-english');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${world.baseUrl}/dashboard/deposits?lang=ja`);
  await check(page, 'phone-deposits');
  await page.goto(`${world.baseUrl}/dashboard/deposits/${held.id}?find=1`);
  await check(page, 'phone-deposit-held');

  expect(seen.filter((s) => s.violations.length > 0)).toEqual([]);
  expect(seen.map((s) => s.name)).toContain('deposit-held');
});

test('when the console is used with the keyboard alone, then the skip link and every form control can be reached and are labelled', async () => {
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/orders`);

  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => document.activeElement?.textContent);
  await page.keyboard.press('Enter');
  const afterSkip = await page.evaluate(() => document.activeElement?.id);
  const unlabelled = await page.evaluate(
    () =>
      [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')].filter((el) => {
        const control = el as HTMLInputElement;
        return control.labels?.length === 0 && !control.getAttribute('aria-label') && (el.tagName !== 'BUTTON' || el.textContent?.trim() === '');
      }).length,
  );

  expect(first).toBe('本文へ移動');
  expect(afterSkip).toBe('main');
  expect(unlabelled).toBe(0);
});
