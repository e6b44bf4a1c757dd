import { codeAt } from '../../../services/orders-api/src/domain/totp';
import {
  type Console,
  ConsoleSession,
  PASSWORD,
  addPerson,
  csrfIn,
  fetchForm,
  openPasswordSetupLink,
  postForm,
  useConsole,
  usePasswordSetupLink,
} from './support';

let world: Console;

useConsole(async (started) => {
  world = started;
});

async function tryLogIn(email: string, password: string, headers: Record<string, string> = {}) {
  const form = await fetchForm(`${world.baseUrl}/dashboard/login`);
  const res = await postForm(`${world.baseUrl}/dashboard/login`, { email, password }, form, headers);
  return { status: res.status, body: await res.text(), cookies: form.cookies };
}

describe('logging in', () => {
  test('when a seller logs in with the browser, then the overview shows in Japanese with the test banner, and the session cookie is HttpOnly, SameSite=Lax and sent only to /dashboard', async () => {
    const page = await world.logIn('admin');

    expect(await page.getAttribute('html', 'lang')).toBe('ja');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('概要');
    expect(await page.getByRole('note').innerText()).toContain('テストモード');
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'pmatch_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/dashboard' });
    // The buyer pages and the API reference share the origin, not the cookie.
    expect((await page.context().cookies([`${world.baseUrl}/pay/x`, `${world.baseUrl}/docs`, `${world.baseUrl}/v1/orders`])).map((c) => c.name)).toEqual([]);
  });

  test('when the e-mail is unknown or the password wrong, then the answer is the same 401 page, and no session starts', async () => {
    const unknown = await tryLogIn('nobody@example.com', PASSWORD);
    const wrong = await tryLogIn(world.people.viewer.email, 'not the password at all');

    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    const message = (body: string) => /<p class="notice notice-error" role="alert"[^>]*>([^<]*)<\/p>/.exec(body)?.[1];
    expect(message(unknown.body)).toBe('メールアドレスまたはパスワードが正しくありません。');
    expect(message(wrong.body)).toBe(message(unknown.body));
    expect([...unknown.cookies.keys(), ...wrong.cookies.keys()].filter((k) => k.endsWith('pmatch_session'))).toEqual([]);
  });

  test('when an account gets nine wrong passwords in a row, then the tenth attempt is throttled (429) even with the right password', async () => {
    const person = await addPerson(world.system, world.orgId, 'viewer', 'throttled@example.com');
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await tryLogIn(person.email, `wrong password ${i}`)).status);

    const tenth = await tryLogIn(person.email, PASSWORD);

    expect(statuses).toEqual(Array(9).fill(401));
    expect(tenth.status).toBe(429);
    expect(tenth.body).toContain('しばらくログインできません');
    expect((await world.system.sql(`SELECT count(*)::int AS n FROM audit_log WHERE user_id = $1 AND action = 'login'`, [person.id]))[0]!.n).toBe(0);
  });

  test('when a password-setup link is used once, then it cannot set a password again', async () => {
    const added = (await world.system.ops('user', 'add', '--org', world.orgId, '--email', 'once@example.com', '--role', 'operator')) as {
      password_setup_url: string;
    };
    const first = await usePasswordSetupLink(added.password_setup_url, PASSWORD);

    const again = await openPasswordSetupLink(added.password_setup_url);

    expect(first.status).toBe(303);
    expect(again.page.status).toBe(404);
    expect(again.html).toContain('このリンクは使えません');
  });

  test('when a password shorter than 12 characters is chosen, then it is refused and the link still works', async () => {
    const added = (await world.system.ops('user', 'add', '--org', world.orgId, '--email', 'short@example.com', '--role', 'viewer')) as {
      password_setup_url: string;
    };
    const res = await usePasswordSetupLink(added.password_setup_url, 'short pass');

    expect(res.status).toBe(400);
    expect(await res.text()).toContain('12文字以上');
    expect((await openPasswordSetupLink(added.password_setup_url)).page.status).toBe(200);
  });

  test('when a set-up link is opened, then its token is in the query only until the page trades it for a cookie of the set-up page, and no log line holds it', async () => {
    const added = (await world.system.ops('user', 'add', '--org', world.orgId, '--email', 'link-in-query@example.com', '--role', 'viewer')) as {
      password_setup_url: string;
    };
    const token = new URL(added.password_setup_url).searchParams.get('token')!;
    const page = await world.newPage();

    await page.goto(added.password_setup_url);

    expect(new URL(added.password_setup_url).pathname).toBe('/dashboard/setup-password');
    expect(page.url()).toBe(`${world.baseUrl}/dashboard/setup-password`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('パスワードの設定');
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'pmatch_setup');
    expect(cookie).toMatchObject({ value: token, httpOnly: true, path: '/dashboard/setup-password' });
    await page.getByLabel('新しいパスワード（12文字以上）').fill(PASSWORD);
    await page.getByLabel('新しいパスワード（確認）').fill(PASSWORD);
    await page.getByRole('button', { name: '設定する' }).click();
    await page.waitForURL(/\/dashboard\/login\?done=password/);
    expect(world.system.logs('orders-api')).not.toContain(token);
  });
});

describe('sessions', () => {
  test('when a session has been idle for more than 30 minutes (the clock moved), then the next page sends the seller to log in', async () => {
    const page = await world.logIn('operator');
    await page.goto(`${world.baseUrl}/dashboard/orders`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('注文');

    world.system.advanceClock(31 * 60 * 1000);
    await page.goto(`${world.baseUrl}/dashboard/orders`);

    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    expect(await page.getByRole('status').innerText()).toContain('しばらく操作がなかったため');
  });

  test('when a seller logs in, then the session id is new, and the one the browser had no longer opens anything', async () => {
    const before = await world.session('viewer');
    const form = await fetchForm(`${world.baseUrl}/dashboard/login`, new Map(before.cookies));
    const res = await postForm(`${world.baseUrl}/dashboard/login`, { email: world.people.viewer.email, password: PASSWORD }, form);

    expect(res.status).toBe(303);
    const after = [...form.cookies].find(([k]) => k === 'pmatch_session')?.[1];
    expect(after).toBeDefined();
    expect(after).not.toBe(before.sessionCookie);
    expect((await before.get('/dashboard/orders')).status).toBe(303);
  });

  test('when a seller logs out, then the session no longer opens pages', async () => {
    const session = await world.session('viewer');

    const out = await session.post('/dashboard/logout');

    expect(out.status).toBe(303);
    expect((await session.get('/dashboard/')).headers.get('location')).toBe('/dashboard/login');
  });
});

describe('what the console refuses', () => {
  test("when a POST comes without the CSRF token, or with another session's, then it is refused with 403 and nothing changes", async () => {
    const admin = await world.session('admin');
    const other = await world.session('operator');

    const without = await admin.post('/dashboard/settings/auto-confirm', { auto_confirm_late_orders: 'true' }, { csrf: null });
    const foreign = await admin.post('/dashboard/settings/auto-confirm', { auto_confirm_late_orders: 'true' }, { csrf: other.csrf });
    const crossSite = await admin.post(
      '/dashboard/settings/auto-confirm',
      { auto_confirm_late_orders: 'true' },
      { headers: { origin: 'https://evil.example' } },
    );

    expect([without.status, foreign.status, crossSite.status]).toEqual([403, 403, 403]);
    expect(await without.text()).toContain('フォームの有効期限が切れたか');
    expect((await world.merchant.request('GET', '/v1/settings')).body.auto_confirm_late_orders).toBe(false);
  });

  test('when a console page is asked for with an API key and no session, then it sends to log in; an API route with only the session cookie is 401', async () => {
    const session = await world.session('admin');

    const consolePage = await fetch(`${world.baseUrl}/dashboard/orders`, { redirect: 'manual', headers: { authorization: `Bearer ${world.merchant.key}` } });
    const consolePost = await fetch(`${world.baseUrl}/dashboard/settings/auto-confirm`, {
      method: 'POST',
      redirect: 'manual',
      headers: { authorization: `Bearer ${world.merchant.key}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'auto_confirm_late_orders=true',
    });
    const api = await fetch(`${world.baseUrl}/v1/orders`, { headers: { cookie: `pmatch_session=${session.sessionCookie}` } });

    expect(consolePage.status).toBe(303);
    expect(consolePage.headers.get('location')).toBe('/dashboard/login');
    expect(consolePost.status).toBe(403);
    expect(api.status).toBe(401);
  });

  test("when another organisation's order or deposit is opened by URL, then the console answers 404", async () => {
    const other = await world.system.createMerchant({ name: '別の店' });
    const order = await other.client.createOrder({ amount: 777 });
    const deposit = await other.client.deposit(777, 'ヤマダ タロウ');
    const session = await world.session('admin');

    expect((await session.get(`/dashboard/orders/${order.id}`)).status).toBe(404);
    expect((await session.get(`/dashboard/deposits/${deposit.id}`)).status).toBe(404);
    expect((await session.post(`/dashboard/orders/${order.id}/cancel`)).status).toBe(404);
    expect((await other.client.order(order.id)).status).toBe('paid');
  });

  test('when any console page is served, then it carries a strict CSP, refuses framing and sends no CORS header', async () => {
    const session = await world.session('viewer');
    const res = await session.get('/dashboard/', { origin: 'https://evil.example' });

    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('second factor', () => {
  test('when a user turns on TOTP, then logging in asks for the code, a wrong code is refused and the right one opens the console', async () => {
    const person = await addPerson(world.system, world.orgId, 'operator', 'totp@example.com');
    const session = await ConsoleSession.logIn(world.baseUrl, person.email, PASSWORD);
    const started = await session.post('/dashboard/account/totp/start', { password: PASSWORD });
    expect(started.status).toBe(303);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(await (await session.get('/dashboard/account')).text())![1]!;
    session.csrf = csrfIn(await (await session.get('/dashboard/account')).text());
    const confirmed = await session.post('/dashboard/account/totp/confirm', { code: codeAt(secret, world.system.now()) });
    expect(confirmed.status).toBe(303);

    const page = await world.newPage();
    await page.goto(`${world.baseUrl}/dashboard/login`);
    await page.getByLabel('メールアドレス').fill(person.email);
    await page.getByLabel('パスワード', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'ログイン' }).click();
    await page.waitForURL(/second-factor/);
    await page.goto(`${world.baseUrl}/dashboard/orders`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/login/second-factor');
    await page.getByLabel('確認コード（6桁）またはリカバリーコード').fill('000000');
    await page.getByRole('button', { name: '確認' }).click();
    expect(await page.getByRole('alert').innerText()).toBe('コードが正しくありません。あと4回まで入力できます。');

    world.system.advanceClock(30_000);
    await page.getByLabel('確認コード（6桁）またはリカバリーコード').fill(codeAt(secret, world.system.now()));
    await page.getByRole('button', { name: '確認' }).click();

    await page.waitForURL(`${world.baseUrl}/dashboard/`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('概要');
  });

  test('when the organisation requires a second factor of admins, then an admin without one is held on the account page until it is set up', async () => {
    const admin = await world.session('admin');
    expect((await admin.post('/dashboard/settings/security', { require_admin_totp: 'true', password: PASSWORD })).status).toBe(303);
    try {
      const other = await addPerson(world.system, world.orgId, 'admin', 'admin2@example.com');
      const session = await ConsoleSession.logIn(world.baseUrl, other.email, PASSWORD);

      const orders = await session.get('/dashboard/orders');
      const account = await session.get('/dashboard/account');

      expect(orders.status).toBe(303);
      expect(orders.headers.get('location')).toBe('/dashboard/account');
      expect(await account.text()).toContain('管理者に二段階認証が必須です');
    } finally {
      await world.system.sql(`UPDATE organisations SET require_admin_totp = false WHERE id = $1`, [world.orgId]);
    }
  });
});
