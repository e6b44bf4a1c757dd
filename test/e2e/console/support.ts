import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { type MerchantClient, TestSystem } from '@pmatch/testkit';
import { HttpsReceiver } from '../../../services/webhook-dispatcher/test/support/receiver';
import { TestCa } from '../../../services/webhook-dispatcher/test/support/tls';
import { assertChromium, launchChromium } from '../support/browser';

/**
 * The seller console as a seller meets it: the real services (packages/testkit), one merchant with
 * an admin, an operator and a viewer who set their passwords through their setup links, an HTTPS
 * webhook receiver, and one Chromium per test file (Debian's, driven by playwright-core).
 */

export const PASSWORD = 'correct horse battery staple';
export type Role = 'admin' | 'operator' | 'viewer';

export interface Person {
  id: string;
  email: string;
  role: Role;
}

export class Console {
  private readonly contexts: BrowserContext[] = [];

  private constructor(
    readonly system: TestSystem,
    readonly browser: Browser,
    readonly receiver: HttpsReceiver,
    private readonly ca: TestCa,
    readonly orgId: string,
    readonly merchant: MerchantClient,
    readonly people: Record<Role, Person>,
  ) {}

  static async start(extraEnv: Record<string, string> = {}): Promise<Console> {
    assertChromium();
    const ca = TestCa.create();
    const receiver = await HttpsReceiver.start(ca.issueServerCertificate());
    const system = await TestSystem.start({
      WEBHOOK_CA_FILE: ca.certFile,
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      DELIVERY_POLL_INTERVAL_MS: '100',
      ...extraEnv,
    });
    try {
      const { orgId, client } = await system.createMerchant({ name: 'テスト商店' });
      const people = {} as Record<Role, Person>;
      for (const role of ['admin', 'operator', 'viewer'] as const) people[role] = await addPerson(system, orgId, role);
      const browser = await launchChromium();
      return new Console(system, browser, receiver, ca, orgId, client, people);
    } catch (error) {
      await system.stop();
      await receiver.close();
      throw error;
    }
  }

  get baseUrl(): string {
    return this.system.apiUrl;
  }

  /** A fresh browser profile logged in as `role` (Japanese unless told), on the overview page. */
  async logIn(role: Role, locale = 'ja-JP'): Promise<Page> {
    const page = await this.newPage(locale);
    await page.goto(`${this.baseUrl}/dashboard/login`);
    await page.getByLabel(locale.startsWith('ja') ? 'メールアドレス' : 'E-mail address').fill(this.people[role].email);
    await page.getByLabel(locale.startsWith('ja') ? 'パスワード' : 'Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: locale.startsWith('ja') ? 'ログイン' : 'Log in' }).click();
    await page.waitForURL(`${this.baseUrl}/dashboard/`);
    return page;
  }

  async newPage(locale = 'ja-JP'): Promise<Page> {
    const context = await this.browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    this.contexts.push(context);
    return context.newPage();
  }

  /** Closes the browser profiles of the test that just ran. */
  async closePages(): Promise<void> {
    await Promise.all(this.contexts.splice(0).map((c) => c.close()));
  }

  /** Switches the logged-in page to live or test mode with the header's button. */
  async switchMode(page: Page, to: 'test' | 'live'): Promise<void> {
    const label = to === 'live' ? '本番に切り替え' : 'テストに切り替え';
    await page.getByRole('button', { name: label }).click();
    await page.waitForURL(`${this.baseUrl}/dashboard/`);
  }

  /** A logged-in console session outside the browser, for requests a browser would not send. */
  async session(role: Role): Promise<ConsoleSession> {
    return ConsoleSession.logIn(this.baseUrl, this.people[role].email, PASSWORD);
  }

  async stop(): Promise<void> {
    await this.closePages().catch(() => undefined);
    await this.browser?.close();
    await this.system?.stop();
    await this.receiver?.close();
    this.ca?.remove();
  }
}

/** Adds a person with `ops user add` and sets their password through the link it printed. */
export async function addPerson(
  system: TestSystem,
  orgId: string,
  role: Role,
  email = `${role}-${orgId.slice(-6).toLowerCase()}@example.com`,
): Promise<Person> {
  const added = (await system.ops('user', 'add', '--org', orgId, '--email', email, '--role', role)) as {
    id: string;
    email: string;
    role: Role;
    password_setup_url: string;
  };
  const res = await usePasswordSetupLink(added.password_setup_url, PASSWORD);
  if (res.status !== 303) throw new Error(`password not set for ${email}: ${res.status}`);
  return { id: added.id, email: added.email, role };
}

/**
 * Opens a password set-up link as a browser does (its first answer trades the token for a cookie
 * and redirects to the page without it), resolving with the page's answer and the form's state.
 */
export async function openPasswordSetupLink(url: string): Promise<{ page: Response; html: string; form: FormState | undefined }> {
  const cookies = new Map<string, string>();
  const first = await fetch(url, { redirect: 'manual' });
  cookiesFrom(first, cookies);
  const location = first.headers.get('location');
  if (first.status !== 303 || location === null) throw new Error(`the set-up link answered ${first.status}, not a redirect`);
  const page = await fetch(new URL(location, url), { redirect: 'manual', headers: { cookie: cookieHeader(cookies) } });
  cookiesFrom(page, cookies);
  const html = await page.text();
  const csrf = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
  return { page, html, form: csrf === undefined ? undefined : { cookies, csrf } };
}

/** Sets a password through a set-up link (the page, then its form); resolves with the form's answer. */
export async function usePasswordSetupLink(url: string, password: string, again = password): Promise<Response> {
  const { form, page } = await openPasswordSetupLink(url);
  if (form === undefined) throw new Error(`the set-up page answered ${page.status} without a form`);
  return postForm(new URL('/dashboard/setup-password', url).toString(), { password, password_again: again }, form);
}

/** An e-mail the webhook dispatcher wrote to MAIL_DIR (no SMTP_URL in tests): its recipient, subject and decoded text. */
export interface SentEmail {
  to: string;
  subject: string;
  text: string;
}

/** Every e-mail the system's dispatcher has written so far, oldest first. */
export function sentEmails(system: TestSystem): SentEmail[] {
  const dir = system.env.MAIL_DIR!;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name) => parseEml(readFileSync(join(dir, name), 'utf8')));
}

/** Waits for the dispatcher to send an e-mail to `to` whose subject matches, and resolves with it (the latest such). */
export async function emailTo(system: TestSystem, to: string, subject: RegExp, after = 0): Promise<SentEmail> {
  const { waitFor } = await import('@pmatch/testkit');
  return waitFor(() => sentEmails(system).filter((m) => m.to === to && subject.test(m.subject))[after], { what: `an e-mail to ${to} (${subject})` });
}

/** The set-up link in an e-mail's text. */
export function setupLinkIn(email: SentEmail): string {
  const link = /https?:\/\/\S+\/dashboard\/setup-password\?token=[0-9A-Za-z]+/.exec(email.text)?.[0];
  if (link === undefined) throw new Error(`no set-up link in: ${email.text}`);
  return link;
}

/** Just enough of RFC 5322 and MIME for nodemailer's plain-text output: headers, then a quoted-printable or base64 body. */
function parseEml(eml: string): SentEmail {
  const [head = '', ...rest] = eml.split(/\r?\n\r?\n/);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) headers.set(line.slice(0, at).toLowerCase(), line.slice(at + 1).trim());
  }
  const body = rest.join('\n\n');
  const encoding = (headers.get('content-transfer-encoding') ?? '').toLowerCase();
  const bytes =
    encoding === 'base64'
      ? Buffer.from(body.replace(/\s+/g, ''), 'base64')
      : encoding === 'quoted-printable'
        ? Buffer.from(
            body
              .replace(/=\r?\n/g, '')
              .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
              .split('')
              .map((c) => c.charCodeAt(0)),
          )
        : Buffer.from(body, 'utf8');
  return { to: headers.get('to') ?? '', subject: decodeWords(headers.get('subject') ?? ''), text: bytes.toString('utf8') };
}

/** RFC 2047 encoded words of a header (=?UTF-8?B?…?= and =?UTF-8?Q?…?=). */
function decodeWords(header: string): string {
  return header.replace(/=\?UTF-8\?([BQ])\?([^?]*)\?=\s*/gi, (_, kind: string, text: string) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(
          text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (__, hex: string) => String.fromCharCode(parseInt(hex, 16))),
          'latin1',
        ).toString('utf8'),
  );
}

interface FormState {
  cookies: Map<string, string>;
  csrf: string;
}

function cookiesFrom(res: Response, into = new Map<string, string>()): Map<string, string> {
  for (const header of res.headers.getSetCookie()) {
    const [pair = ''] = header.split(';');
    const at = pair.indexOf('=');
    const value = pair.slice(at + 1);
    if (value === '' || /expires=Thu, 01 Jan 1970/i.test(header)) into.delete(pair.slice(0, at));
    else into.set(pair.slice(0, at), value);
  }
  return into;
}

const cookieHeader = (cookies: Map<string, string>) => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');

export function csrfIn(html: string): string {
  const match = /name="_csrf" value="([^"]*)"/.exec(html);
  if (match === null) throw new Error('no CSRF token in the page');
  return match[1]!;
}

async function fetchForm(url: string, cookies = new Map<string, string>()): Promise<FormState> {
  const res = await fetch(url, { headers: { cookie: cookieHeader(cookies) } });
  const html = await res.text();
  return { cookies: cookiesFrom(res, cookies), csrf: csrfIn(html) };
}

async function postForm(url: string, fields: Record<string, string>, state: FormState, extra: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(state.cookies), ...extra },
    body: new URLSearchParams({ _csrf: state.csrf, ...fields }),
  });
  cookiesFrom(res, state.cookies);
  return res;
}

/** A console session held by fetch: its cookies and CSRF token, and forms sent as a browser would, or not. */
export class ConsoleSession {
  private constructor(
    readonly baseUrl: string,
    readonly cookies: Map<string, string>,
    public csrf: string,
  ) {}

  static async logIn(baseUrl: string, email: string, password: string): Promise<ConsoleSession> {
    const form = await fetchForm(`${baseUrl}/dashboard/login`);
    const res = await postForm(`${baseUrl}/dashboard/login`, { email, password }, form);
    if (res.status !== 303) throw new Error(`not logged in: ${res.status}`);
    const session = new ConsoleSession(baseUrl, form.cookies, '');
    // The account page opens even for an admin who still owes a second factor.
    session.csrf = csrfIn(await (await session.get('/dashboard/account')).text());
    return session;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${this.baseUrl}${path}`, { redirect: 'manual', headers: { cookie: cookieHeader(this.cookies), ...headers } });
  }

  /** A form POST; `csrf: null` leaves the token out, as a forged request from another site would. */
  post(path: string, fields: Record<string, string> = {}, options: { csrf?: string | null; headers?: Record<string, string> } = {}): Promise<Response> {
    const token = options.csrf === undefined ? this.csrf : options.csrf;
    return fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(this.cookies), ...options.headers },
      body: new URLSearchParams({ ...(token === null ? {} : { _csrf: token }), ...fields }),
    });
  }

  get sessionCookie(): string {
    return [...this.cookies].find(([k]) => k.endsWith('pmatch_session'))?.[1] ?? '';
  }
}

export { fetchForm, postForm };

/** axe-core, run in the page (evaluated over the DevTools protocol, which the page's CSP does not govern). */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Every axe-core violation on the page, of any impact. */
export async function axeViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run: (context: unknown, options: unknown) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    return axe.run(document, { resultTypes: ['violations'] });
  });
  return results.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

/** The axe-core violations of serious or critical impact. */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  return (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Registers a webhook endpoint at the receiver for every event type, through the API. */
export async function webhookEndpoint(world: Console, path: string): Promise<{ id: string }> {
  const res = await world.merchant.request('POST', '/v1/webhook-endpoints', { url: world.receiver.url(path) });
  if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The events the receiver got at `path`, parsed, once one of `type` about `objectId` has arrived. */
export async function delivered(world: Console, path: string, type: string, objectId: string): Promise<any> {
  const { waitFor } = await import('@pmatch/testkit');
  return waitFor(
    () =>
      world.receiver
        .requestsTo(path)
        .map((r) => JSON.parse(r.body))
        .find((e) => e.type === type && e.data.object.id === objectId),
    { what: `${type} for ${objectId} at ${path}` },
  );
}

/** Starts the test file's console before its tests (then `onStart`), closes its pages after each test and stops it after all. */
export function useConsole(onStart: (world: Console) => Promise<void> | void, extraEnv: Record<string, string> = {}): void {
  let world: Console | undefined;
  beforeAll(async () => {
    world = await Console.start(extraEnv);
    await onStart(world);
  });
  afterEach(async () => {
    await world?.closePages();
  });
  afterAll(async () => {
    await world?.stop();
  });
}
