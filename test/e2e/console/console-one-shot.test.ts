import type { Page } from 'playwright-core';
import { type Console, PASSWORD, addPerson, emailTo, seriousViolations, sentEmails, useConsole, webhookEndpoint } from './support';

/**
 * The one-shot actions in Chromium: every form that changes something answers with a redirect, a
 * secret is shown once by the page after it, a reload of that page changes nothing and shows the
 * secret no more, and destructive actions ask first.
 */

let world: Console;

useConsole(async (started) => {
  world = started;
});

const audited = async (action: string, objectId?: string) =>
  (
    await world.system.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_log WHERE organisation_id = $1 AND action = $2 AND ($3::text IS NULL OR object_id = $3)`,
      [world.orgId, action, objectId ?? null],
    )
  )[0]!.n;

/** Reloads as a person pressing F5 does, and resolves with the reloaded page's status. */
async function reload(page: Page): Promise<number> {
  return (await page.reload())!.status();
}

test('when the page that showed a new API key is reloaded, then the key is not shown again and no second key is issued', async () => {
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/api-keys`);
  await page.getByLabel('名前').fill('一度だけ');
  await page.getByRole('button', { name: 'APIキーを発行' }).click();
  const keyText = await page.locator('#key-text').innerText();
  expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/api-keys\/issued\/[0-9A-Za-z]{32}$/);
  expect(await seriousViolations(page)).toEqual([]);

  expect(await reload(page)).toBe(410);

  expect(await page.content()).not.toContain(keyText);
  expect(await page.getByRole('status').innerText()).toContain('一度だけ表示され');
  expect(await world.system.sql(`SELECT count(*)::int AS n FROM api_keys WHERE organisation_id = $1 AND name = '一度だけ'`, [world.orgId])).toEqual([{ n: 1 }]);
  expect(await world.system.sql(`SELECT key_hint FROM api_keys WHERE organisation_id = $1 AND name = '一度だけ'`, [world.orgId])).toEqual([
    { key_hint: `svc_test_...${keyText.slice(-4)}` },
  ]);
});

test('when a key is revoked, then the console asks first (opening the question revokes nothing), and a reload after revoking changes nothing', async () => {
  const issued = await world.system.ops('key', 'issue', '--org', world.orgId, '--mode', 'test', '--name', 'revoke-me');
  const call = () => fetch(`${world.baseUrl}/v1/orders`, { headers: { authorization: `Bearer ${String(issued.key)}` } });
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/api-keys`);

  await page.getByRole('link', { name: '失効させる: revoke-me' }).click();
  expect(await page.getByRole('heading', { level: 2 }).innerText()).toBe('APIキー「revoke-me」を失効させますか？');
  expect(await seriousViolations(page)).toEqual([]);
  expect((await call()).status).toBe(200);
  await page.getByRole('button', { name: '失効させる' }).click();
  expect(await page.getByRole('status').innerText()).toBe('APIキーを失効させました。');

  expect(await reload(page)).toBe(200);

  expect((await call()).status).toBe(401);
  expect(await audited('api_key.revoke', String(issued.id))).toBe(1);
});

test('when the page that showed a webhook secret is reloaded, then the secret is not shown again; reissuing asks first, and a reload after it reissues nothing', async () => {
  const endpoint = await webhookEndpoint(world, '/one-shot');
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/webhooks/${endpoint.id}`);
  await page.getByLabel('パスワードを再入力').fill(PASSWORD);
  await page.getByRole('button', { name: 'シークレットを表示' }).click();
  const shown = await page.locator('#secret-text').innerText();
  expect(shown).toMatch(/^whsec_/);

  expect(await reload(page)).toBe(200);
  expect(await page.content()).not.toContain(shown);
  expect(await page.getByText('シークレットは一度だけ表示されました').isVisible()).toBe(true);

  await page.getByRole('link', { name: 'シークレットを再発行' }).click();
  expect(await page.getByRole('heading', { level: 2 }).innerText()).toContain('署名シークレットを再発行しますか？');
  expect(await seriousViolations(page)).toEqual([]);
  expect(await audited('webhook_endpoint.rotate_secret', endpoint.id)).toBe(0);
  await page.getByLabel('パスワードを再入力').fill(PASSWORD);
  await page.getByRole('button', { name: 'シークレットを再発行' }).click();
  const rotated = await page.locator('#secret-text').innerText();
  expect(rotated).not.toBe(shown);

  expect(await reload(page)).toBe(200);

  expect(await page.content()).not.toContain(rotated);
  expect(await audited('webhook_endpoint.rotate_secret', endpoint.id)).toBe(1);
  expect((await world.merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}/secret`)).body.secret).toBe(rotated);
});

test('when an endpoint is deleted, then the console asks first, and a reload after deleting changes nothing', async () => {
  const endpoint = await webhookEndpoint(world, '/delete-me');
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/webhooks/${endpoint.id}`);

  await page.getByRole('link', { name: 'エンドポイントを削除' }).click();
  expect((await world.merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(200);
  await page.getByRole('button', { name: 'エンドポイントを削除' }).click();
  expect(await page.getByRole('status').innerText()).toBe('エンドポイントを削除しました。');
  expect(await reload(page)).toBe(200);

  expect((await world.merchant.request('GET', `/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(404);
  expect(await audited('webhook_endpoint.delete', endpoint.id)).toBe(1);
});

test('when the page after an invitation is reloaded, then no second invitation is made or e-mailed', async () => {
  const page = await world.logIn('admin');
  await page.goto(`${world.baseUrl}/dashboard/team`);
  const invite = page.locator('form').filter({ has: page.getByRole('button', { name: 'メンバーを招待' }) });
  await invite.getByLabel('メールアドレス').fill('invited-once@example.com');
  await page.getByRole('button', { name: 'メンバーを招待' }).click();
  await emailTo(world.system, 'invited-once@example.com', /招待/);

  expect(await reload(page)).toBe(200);

  expect(await page.getByRole('status').innerText()).toContain('invited-once@example.com に招待メールを送りました');
  expect(await audited('user.invite')).toBe(1);
  // E-mails are queued in the action's own transaction: a second invitation would be a second row.
  expect(await world.system.sql(`SELECT count(*)::int AS n FROM webhook_emails WHERE recipient = 'invited-once@example.com'`)).toEqual([{ n: 1 }]);
  expect(sentEmails(world.system).filter((m) => m.to === 'invited-once@example.com')).toHaveLength(1);
});

test('when the pages of log-in and security are checked with axe-core, then none has a serious violation', async () => {
  const person = await addPerson(world.system, world.orgId, 'viewer', 'axe-security@example.com');
  const page = await world.newPage();
  const violations: { page: string; found: unknown[] }[] = [];
  const check = async (name: string) => violations.push({ page: name, found: await seriousViolations(page) });

  await page.goto(`${world.baseUrl}/dashboard/password/forgot`);
  await check('forgot');
  await page.goto(`${world.baseUrl}/dashboard/login`);
  await page.getByLabel('メールアドレス').fill(person.email);
  await page.getByLabel('パスワード', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'ログイン' }).click();
  await page.waitForURL(`${world.baseUrl}/dashboard/`);
  await page.goto(`${world.baseUrl}/dashboard/account`);
  await check('account');
  await page.getByLabel('パスワードを再入力').fill(PASSWORD);
  await page.getByRole('button', { name: '二段階認証を設定' }).click();
  await check('account-enrolling');
  const admin = await world.logIn('admin');
  await admin.goto(`${world.baseUrl}/dashboard/team/${person.id}/reset`);
  violations.push({ page: 'team-reset', found: await seriousViolations(admin) });

  expect(violations.filter((v) => v.found.length > 0)).toEqual([]);
});
