import { codeAt } from '../../../services/orders-api/src/domain/totp';
import {
  type Console,
  ConsoleSession,
  PASSWORD,
  addPerson,
  csrfIn,
  emailTo,
  fetchForm,
  openPasswordSetupLink,
  postForm,
  sentEmails,
  setupLinkIn,
  useConsole,
  usePasswordSetupLink,
  webhookEndpoint,
} from './support';

/**
 * The console's log-in and security as an attacker meets them: limited guesses of passwords and
 * second-factor codes (also in parallel), passwords typed again, recovery codes, resets by e-mail
 * and by an admin, and invitations that tell nothing of other organisations.
 */

let world: Console;

useConsole(async (started) => {
  world = started;
});

const cookieHeader = (cookies: Map<string, string>) => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
const auditCount = async (userId: string, action: string) =>
  (await world.system.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE user_id = $1 AND action = $2`, [userId, action]))[0]!.n;

/** Turns the person's second factor on; resolves with its secret and the recovery codes shown once. */
async function turnOnSecondFactor(session: ConsoleSession): Promise<{ secret: string; recoveryCodes: string[] }> {
  expect((await session.post('/dashboard/account/totp/start', { password: PASSWORD })).status).toBe(303);
  const page = await (await session.get('/dashboard/account')).text();
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page)![1]!;
  expect(page).toMatch(/<img class="qr" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/);
  session.csrf = csrfIn(page);
  world.system.advanceClock(30_000);
  const confirmed = await session.post('/dashboard/account/totp/confirm', { code: codeAt(secret, world.system.now()) });
  expect(confirmed.status).toBe(303);
  const codesPage = await (await session.get(confirmed.headers.get('location')!)).text();
  const recoveryCodes = [...codesPage.matchAll(/<li><code>([a-z2-7-]{19})<\/code><\/li>/g)].map((m) => m[1]!);
  expect(recoveryCodes).toHaveLength(10);
  return { secret, recoveryCodes };
}

/** Logs in with the password over fetch, up to the second factor's form: the waiting session's cookies and CSRF token. */
async function passwordOnly(email: string): Promise<{ cookies: Map<string, string>; csrf: string }> {
  const form = await fetchForm(`${world.baseUrl}/dashboard/login`);
  const res = await postForm(`${world.baseUrl}/dashboard/login`, { email, password: PASSWORD }, form);
  expect(res.headers.get('location')).toBe('/dashboard/login/second-factor');
  const page = await fetch(`${world.baseUrl}/dashboard/login/second-factor`, { headers: { cookie: cookieHeader(form.cookies) } });
  return { cookies: form.cookies, csrf: csrfIn(await page.text()) };
}

function sendCode(waiting: { cookies: Map<string, string>; csrf: string }, code: string): Promise<Response> {
  return fetch(`${world.baseUrl}/dashboard/login/second-factor`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(waiting.cookies) },
    body: new URLSearchParams({ _csrf: waiting.csrf, code }),
  });
}

/** `n` codes of six digits that the authenticator shows at none of the steps accepted now. */
function wrongCodes(secret: string, n: number): string[] {
  const now = world.system.now().getTime();
  const accepted = new Set([-30_000, 0, 30_000].map((d) => codeAt(secret, new Date(now + d))));
  return Array.from({ length: n + 3 }, (_, i) => String(100000 + i))
    .filter((c) => !accepted.has(c))
    .slice(0, n);
}

async function tryLogIn(email: string, password: string): Promise<number> {
  const form = await fetchForm(`${world.baseUrl}/dashboard/login`);
  return (await postForm(`${world.baseUrl}/dashboard/login`, { email, password }, form)).status;
}

describe('second factor', () => {
  test("when twenty wrong codes are sent for one log-in, then it ends after the fifth, the right code opens nothing, and the codes count toward the account's throttle", async () => {
    const person = await addPerson(world.system, world.orgId, 'operator', 'twenty-codes@example.com');
    const { secret } = await turnOnSecondFactor(await ConsoleSession.logIn(world.baseUrl, person.email, PASSWORD));
    const waiting = await passwordOnly(person.email);

    const answers: Response[] = [];
    for (const code of wrongCodes(secret, 20)) answers.push(await sendCode(waiting, code));
    world.system.advanceClock(30_000);
    const right = await sendCode(waiting, codeAt(secret, world.system.now()));

    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 303, ...Array(15).fill(403)]);
    expect(answers[4]!.headers.get('location')).toBe('/dashboard/login?problem=second_factor_ended');
    expect(right.status).toBe(403);
    expect(await auditCount(person.id, 'second_factor_failed')).toBe(5);
    expect(await auditCount(person.id, 'second_factor')).toBe(0);
    // The log-in's password (given back only with a proven code) and its five wrong codes took six of the account's nine tries.
    for (let i = 0; i < 3; i++) expect(await tryLogIn(person.email, `wrong ${i}`)).toBe(401);
    expect(await tryLogIn(person.email, PASSWORD)).toBe(429);
  });

  test('when twenty wrong codes for one log-in arrive at once, then at most five are checked', async () => {
    const person = await addPerson(world.system, world.orgId, 'viewer', 'parallel-codes@example.com');
    const { secret } = await turnOnSecondFactor(await ConsoleSession.logIn(world.baseUrl, person.email, PASSWORD));
    const waiting = await passwordOnly(person.email);

    const answers = await Promise.all(wrongCodes(secret, 20).map((code) => sendCode(waiting, code)));

    expect(answers.filter((a) => a.status === 401).length).toBeLessThanOrEqual(4);
    expect(answers.filter((a) => a.headers.get('location') === '/dashboard/')).toEqual([]);
    expect(await auditCount(person.id, 'second_factor_failed')).toBeLessThanOrEqual(5);
    expect(await auditCount(person.id, 'second_factor')).toBe(0);
  });

  test('when a person sets up a second factor in the browser, then a QR code and ten recovery codes show once; a recovery code logs in once; turning it off needs a code', async () => {
    const person = await addPerson(world.system, world.orgId, 'operator', 'recovery@example.com');
    const page = await world.newPage();
    await page.goto(`${world.baseUrl}/dashboard/login`);
    await page.getByLabel('メールアドレス').fill(person.email);
    await page.getByLabel('パスワード', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'ログイン' }).click();
    await page.waitForURL(`${world.baseUrl}/dashboard/`);
    await page.goto(`${world.baseUrl}/dashboard/account`);
    await page.getByLabel('パスワードを再入力').fill(PASSWORD);
    await page.getByRole('button', { name: '二段階認証を設定' }).click();
    expect(await page.getByRole('img', { name: '認証アプリに登録するQRコード' }).isVisible()).toBe(true);
    const secret = await page.locator('#totp-secret').innerText();
    world.system.advanceClock(30_000);
    await page.getByLabel('認証アプリの確認コード（6桁）').fill(codeAt(secret, world.system.now()));
    await page.getByRole('button', { name: '有効にする' }).click();
    const codes = await page.locator('#recovery-codes code').allInnerTexts();
    expect(codes).toHaveLength(10);
    await page.reload();
    expect(await page.getByRole('status').innerText()).toContain('一度だけ表示され');
    expect(await page.content()).not.toContain(codes[0]!);

    const withRecovery = await passwordOnly(person.email);
    const used = await sendCode(withRecovery, codes[0]!.toUpperCase());
    const again = await sendCode(await passwordOnly(person.email), codes[0]!);

    expect(used.status).toBe(303);
    expect(used.headers.get('location')).toBe('/dashboard/');
    expect(again.status).toBe(401);
    await page.goto(`${world.baseUrl}/dashboard/account`);
    expect(await page.getByText('未使用のリカバリーコード: 9個').isVisible()).toBe(true);
    await page
      .getByRole('textbox', { name: /確認コード/ })
      .first()
      .fill(PASSWORD);
    await page.getByRole('button', { name: '二段階認証を無効にする' }).click();
    expect(await page.getByRole('alert').innerText()).toBe('コードが正しくありません。');
    await page
      .getByRole('textbox', { name: /確認コード/ })
      .first()
      .fill(codes[1]!);
    await page.getByRole('button', { name: '二段階認証を無効にする' }).click();
    expect(await page.getByRole('status').innerText()).toBe('二段階認証を無効にしました。');
    expect(
      await world.system.sql(`SELECT totp_enabled_at, (SELECT count(*)::int FROM user_recovery_codes WHERE user_id = $1) AS codes FROM users WHERE id = $1`, [
        person.id,
      ]),
    ).toEqual([{ totp_enabled_at: null, codes: 0 }]);
  });
});

describe('throttles that hold under parallel requests', () => {
  test('when 80 wrong passwords for one account arrive at once, then nine are checked and the other 71 refused unchecked (429)', async () => {
    const person = await addPerson(world.system, world.orgId, 'viewer', 'eighty@example.com');
    const forms = await Promise.all(Array.from({ length: 80 }, () => fetchForm(`${world.baseUrl}/dashboard/login`)));

    const statuses = (
      await Promise.all(forms.map((form, i) => postForm(`${world.baseUrl}/dashboard/login`, { email: person.email, password: `wrong password ${i}` }, form)))
    ).map((r) => r.status);

    expect(statuses.filter((s) => s === 401)).toHaveLength(9);
    expect(statuses.filter((s) => s === 429)).toHaveLength(71);
    expect(await auditCount(person.id, 'login_failed')).toBe(9);
    expect(await tryLogIn(person.email, PASSWORD)).toBe(429);
  });

  test('when a password is typed again wrongly thirty times (to show a webhook secret), then five are checked, the rest and then the right one are refused unchecked', async () => {
    const admin = await addPerson(world.system, world.orgId, 'admin', 'thirty@example.com');
    const endpoint = await webhookEndpoint(world, '/thirty');
    const session = await ConsoleSession.logIn(world.baseUrl, admin.email, PASSWORD);

    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await session.post(`/dashboard/webhooks/${endpoint.id}/secret`, { password: `wrong ${i}` })).status);
    const right = await session.post(`/dashboard/webhooks/${endpoint.id}/secret`, { password: PASSWORD });

    expect(statuses).toEqual([...Array(5).fill(403), ...Array(25).fill(429)]);
    expect(right.status).toBe(429);
    expect(await right.text()).toContain('入力の誤りが続いたため');
    expect(await auditCount(admin.id, 'reentry_failed')).toBe(5);
    expect(await auditCount(admin.id, 'webhook_endpoint.reveal_secret')).toBe(0);
    // Every other place that asks for the password again shares the allowance.
    expect((await session.post('/dashboard/settings/security', { require_admin_totp: 'true', password: PASSWORD })).status).toBe(429);
  });

  test('when the admins-need-a-second-factor setting is changed, then the password is asked again and a wrong one changes nothing', async () => {
    const admin = await world.session('admin');

    const wrong = await admin.post('/dashboard/settings/security', { require_admin_totp: 'true', password: 'not the password' });
    const none = await admin.post('/dashboard/settings/security', { require_admin_totp: 'true' });

    expect([wrong.status, none.status]).toEqual([403, 403]);
    expect(await world.system.sql(`SELECT require_admin_totp FROM organisations WHERE id = $1`, [world.orgId])).toEqual([{ require_admin_totp: false }]);
  });
});

describe('a way back for people locked out', () => {
  test('when an admin resets a locked-out person, then their sessions, password and second factor end, a new link is e-mailed and shown once, and they can log in at once', async () => {
    const person = await addPerson(world.system, world.orgId, 'operator', 'locked-out@example.com');
    const before = await ConsoleSession.logIn(world.baseUrl, person.email, PASSWORD);
    await turnOnSecondFactor(before);
    for (let i = 0; i < 9; i++) await tryLogIn(person.email, `wrong ${i}`);
    expect(await tryLogIn(person.email, PASSWORD)).toBe(429);

    const page = await world.logIn('admin');
    await page.goto(`${world.baseUrl}/dashboard/team`);
    await page.getByRole('link', { name: `アクセスを再設定: ${person.email}` }).click();
    expect(await page.getByRole('heading', { level: 2 }).innerText()).toBe(`${person.email} のアクセスを再設定しますか？`);
    await page.getByRole('button', { name: 'アクセスを再設定' }).click();
    const shownLink = await page.locator('#setup-url').innerText();
    await page.reload();
    expect(await page.getByRole('status').innerText()).toContain('もう表示できません');
    expect(await auditCount(world.people.admin.id, 'user.reset_access')).toBe(1);

    const email = await emailTo(world.system, person.email, /アクセスの再設定/);
    expect(setupLinkIn(email)).toBe(shownLink);
    expect((await before.get('/dashboard/')).status).toBe(303);
    expect(await tryLogIn(person.email, PASSWORD)).toBe(401);
    expect((await usePasswordSetupLink(shownLink, 'a brand new passphrase')).status).toBe(303);
    const after = await ConsoleSession.logIn(world.baseUrl, person.email, 'a brand new passphrase');
    expect((await after.get('/dashboard/')).status).toBe(200);
  });

  test('when the operator runs `ops user reset`, then it prints a new link and the person loses their sessions and second factor', async () => {
    const person = await addPerson(world.system, world.orgId, 'viewer', 'ops-reset@example.com');
    const session = await ConsoleSession.logIn(world.baseUrl, person.email, PASSWORD);
    await turnOnSecondFactor(session);

    const printed = await world.system.ops('user', 'reset', '--user', person.id);

    expect(printed).toMatchObject({ id: person.id, email: person.email, organisation_id: world.orgId });
    expect(String(printed.password_setup_url)).toMatch(/\/dashboard\/setup-password\?token=[0-9A-Za-z]{40}$/);
    expect((await session.get('/dashboard/')).status).toBe(303);
    expect((await usePasswordSetupLink(String(printed.password_setup_url), 'another new passphrase')).status).toBe(303);
    expect((await (await ConsoleSession.logIn(world.baseUrl, person.email, 'another new passphrase')).get('/dashboard/')).status).toBe(200);
  });

  test('when a person asks for a password reset, then the link arrives by e-mail and works once, the second factor is still asked, and an unknown address gets the same answer and no e-mail', async () => {
    const person = await addPerson(world.system, world.orgId, 'operator', 'forgot@example.com');
    await turnOnSecondFactor(await ConsoleSession.logIn(world.baseUrl, person.email, PASSWORD));
    const ask = async (email: string) => {
      const form = await fetchForm(`${world.baseUrl}/dashboard/password/forgot`);
      return postForm(`${world.baseUrl}/dashboard/password/forgot`, { email }, form);
    };

    const known = await ask(person.email);
    const unknown = await ask('nobody-here@example.com');

    expect([known.status, unknown.status]).toEqual([303, 303]);
    expect(unknown.headers.get('location')).toBe(known.headers.get('location'));
    const link = setupLinkIn(await emailTo(world.system, person.email, /パスワードの再設定/));
    expect((await usePasswordSetupLink(link, 'reset by e-mail passphrase')).status).toBe(303);
    expect((await openPasswordSetupLink(link)).page.status).toBe(404);
    const form = await fetchForm(`${world.baseUrl}/dashboard/login`);
    const login = await postForm(`${world.baseUrl}/dashboard/login`, { email: person.email, password: 'reset by e-mail passphrase' }, form);
    expect(login.headers.get('location')).toBe('/dashboard/login/second-factor');
    expect(sentEmails(world.system).filter((m) => m.to === 'nobody-here@example.com')).toEqual([]);
  });

  test('when reset links are asked for one address again and again, then the fourth request within 15 minutes is refused (429), known address or not', async () => {
    const ask = async () => {
      const form = await fetchForm(`${world.baseUrl}/dashboard/password/forgot`);
      return (await postForm(`${world.baseUrl}/dashboard/password/forgot`, { email: 'asked-often@example.com' }, form)).status;
    };

    const statuses = [await ask(), await ask(), await ask(), await ask()];

    expect(statuses).toEqual([303, 303, 303, 429]);
  });
});

describe('invitations', () => {
  test("when an admin invites an address that is another organisation's account, then the answer and the team page are those of any invitation, and only the address's owner learns it is taken", async () => {
    const other = await world.system.createMerchant({ name: '隣の店' });
    const taken = await addPerson(world.system, other.orgId, 'admin', 'taken-elsewhere@example.com');
    const admin = await world.session('admin');

    const forTaken = await admin.post('/dashboard/team', { email: taken.email, role: 'viewer' });
    const forNew = await admin.post('/dashboard/team', { email: 'brand-new@example.com', role: 'viewer' });

    expect([forTaken.status, forNew.status]).toEqual([303, 303]);
    expect(forTaken.headers.get('location')!.replace(encodeURIComponent(taken.email), 'X')).toBe(
      forNew.headers.get('location')!.replace(encodeURIComponent('brand-new@example.com'), 'X'),
    );
    const team = await (await admin.get('/dashboard/team')).text();
    const rowOf = (email: string) =>
      team
        .split('<tr>')
        .find((row) => row.startsWith(`<td>${email} </td>`))
        ?.split('</tr>')[0]
        ?.replaceAll(email, 'E')
        .replace(/\d{4}-\d{2}-\d{2} [\d:]+ \+09:00/, 'T')
        .replace(/usr_\w+/g, 'U');
    expect(rowOf(taken.email)).toContain('招待中');
    expect(rowOf(taken.email)).toBe(rowOf('brand-new@example.com'));
    const invitation = await emailTo(world.system, taken.email, /テスト商店/);
    const { html } = await openPasswordSetupLink(setupLinkIn(invitation));
    expect(html).toContain(taken.email);
    const tried = await usePasswordSetupLink(setupLinkIn(invitation), 'would take the address');
    expect(tried.status).toBe(409);
    expect(await tried.text()).toContain('別の組織のコンソールですでに使われています');
    expect((await (await ConsoleSession.logIn(world.baseUrl, taken.email, PASSWORD)).get('/dashboard/')).status).toBe(200);
  });
});
