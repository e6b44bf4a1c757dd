import { timingSafeEqual } from 'node:crypto';
import type { Mode, UserRole } from '@pmatch/contracts';
import type { ConsoleSessionRow, UserRow } from '@pmatch/db';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuditContext } from '../use-cases/audit';
import type { ConsoleDeps } from '../use-cases/console-login';
import { openSession } from '../use-cases/console-session';
import { mayAct, userActor, type ConsoleActor } from './actor';
import { TEXTS, chooseLanguage, type Language, type Texts } from './texts';

/**
 * How the console's cookies are named and flagged: `__Secure-` and Secure outside local development,
 * and scoped to the console's own path (`__Host-` would demand Path=/, which also sends them to the
 * payment pages and the API reference): docs/decisions/0155-console-cookies-scoped-to-the-console.md.
 */
export interface CookiePolicy {
  secure: boolean;
}

const cookieName = (policy: CookiePolicy, name: string) => (policy.secure ? `__Secure-${name}` : name);
export const sessionCookieName = (policy: CookiePolicy) => cookieName(policy, 'pmatch_session');
export const loginCsrfCookieName = (policy: CookiePolicy) => cookieName(policy, 'pmatch_login');
/** Holds a password set-up token between the link's first request and the form's answer. */
export const setupCookieName = (policy: CookiePolicy) => cookieName(policy, 'pmatch_setup');
export const LANGUAGE_COOKIE = 'pmatch_lang';

/** Every console cookie is sent only to the console's pages. */
export const CONSOLE_PATH = '/dashboard';

export function cookieOptions(policy: CookiePolicy, sameSite: 'lax' | 'strict' = 'lax', path = CONSOLE_PATH) {
  return { httpOnly: true, secure: policy.secure, sameSite, path } as const;
}

/**
 * Ends the session cookie, and the one of the same name a browser may still hold for `Path=/` from
 * before the cookies were scoped to the console (it would otherwise keep a session open).
 */
export function clearSessionCookie(res: Response, policy: CookiePolicy): void {
  res.clearCookie(sessionCookieName(policy), cookieOptions(policy));
  clearLegacySessionCookie(res, policy);
}

/** Only the `Path=/` cookie of before (its name, under `__Host-`, differs when Secure, so only local development can still send it). */
export function clearLegacySessionCookie(res: Response, policy: CookiePolicy): void {
  if (!policy.secure) res.clearCookie(sessionCookieName(policy), cookieOptions(policy, 'lax', '/'));
}

export function cookiesOf(req: Request): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (!cookies.has(name)) {
      try {
        cookies.set(name, decodeURIComponent(part.slice(at + 1).trim()));
      } catch {
        // A value that is not percent-encoded text is no cookie of ours.
      }
    }
  }
  return cookies;
}

/** What a console page knows of the request: language, and once logged in, the person and session. */
export interface ConsoleRequestContext {
  language: Language;
  t: Texts;
  ip: string;
  path: string;
  query: string;
  signedIn?: SignedIn;
}

export interface SignedIn {
  token: string;
  session: ConsoleSessionRow;
  user: UserRow;
  organisationName: string;
  mode: Mode;
  actor: ConsoleActor;
  csrfToken: string;
  /** An admin who must set up a second factor before using anything else. */
  owesSecondFactorSetup: boolean;
}

declare global {
  namespace Express {
    interface Request {
      console?: ConsoleRequestContext;
    }
  }
}

export function contextOf(req: Request): ConsoleRequestContext {
  if (req.console === undefined) throw new Error('console route mounted without consoleContext()');
  return req.console;
}

export function signedInOf(req: Request): SignedIn {
  const signedIn = contextOf(req).signedIn;
  if (signedIn === undefined) throw new ConsoleRefusal(401, 'signed out');
  return signedIn;
}

/** Who acts, for the audit row the use case writes with the action. */
export function auditContextOf(req: Request): AuditContext {
  const { actor } = signedInOf(req);
  return { organisationId: actor.organisationId, mode: actor.mode, userId: actor.userId, email: actor.email, ip: contextOf(req).ip };
}

/** A console answer other than the page: 401 sends to log in; 403, 404 render the console's page. */
export class ConsoleRefusal extends Error {
  constructor(
    readonly status: 401 | 403 | 404,
    reason: string,
    readonly kind: 'forbidden' | 'csrf' | 'not_found' | 'signed_out' = status === 404 ? 'not_found' : status === 401 ? 'signed_out' : 'forbidden',
    /** For a refusal by role: the least role that may do it, so the page can say whom to ask. */
    readonly neededRole?: UserRole,
  ) {
    super(reason);
  }
}

/**
 * Reads the language and the session for every console request (`openSession`: a session past its
 * timeouts counts as none). Nothing here reads an Authorization header: API keys open nothing on
 * the console.
 */
export function consoleContext(deps: ConsoleDeps, policy: CookiePolicy): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const cookies = cookiesOf(req);
    const language = chooseLanguage(req.query.lang, cookies.get(LANGUAGE_COOKIE), (...offered) => req.acceptsLanguages(...offered));
    if (req.query.lang === language) res.cookie(LANGUAGE_COOKIE, language, { ...cookieOptions(policy), maxAge: 365 * 24 * 60 * 60 * 1000 });
    const url = new URL(req.originalUrl, 'http://console');
    url.searchParams.delete('lang');
    req.console = { language, t: TEXTS[language], ip: req.ip ?? req.socket.remoteAddress ?? 'unknown', path: url.pathname, query: url.search };
    const token = cookies.get(sessionCookieName(policy));
    if (token !== undefined && /^[A-Za-z0-9_-]{43}$/.test(token)) {
      const opened = await openSession(deps, token);
      if (opened === 'ended') {
        clearSessionCookie(res, policy);
        (req.console as { sessionEnded?: boolean }).sessionEnded = true;
      } else if (opened !== 'none') {
        const { session, user, mode } = opened;
        req.console.signedIn = {
          token,
          session,
          user,
          organisationName: opened.organisationName,
          mode,
          actor: userActor(user, mode, opened.accountIds, opened.dedicatedAccountIds),
          csrfToken: session.csrfToken,
          owesSecondFactorSetup: opened.owesSecondFactorSetup,
        };
      }
    }
    next();
  };
}

/** Whether the session ended for inactivity on this very request (the login page says so). */
export function sessionEndedNow(req: Request): boolean {
  return (req.console as { sessionEnded?: boolean } | undefined)?.sessionEnded === true;
}

/** A page for people who are fully logged in (second factor given, and set up where required). */
export function signedInPage(): RequestHandler {
  return (req, res, next) => {
    const signedIn = contextOf(req).signedIn;
    if (signedIn === undefined || signedIn.session.secondFactorPending) {
      if (req.method === 'GET') {
        const expired = sessionEndedNow(req) ? '?expired=1' : '';
        return res.redirect(303, signedIn === undefined ? `/dashboard/login${expired}` : '/dashboard/login/second-factor');
      }
      return next(new ConsoleRefusal(403, 'not signed in', 'csrf'));
    }
    // What an admin who owes a second factor may still do: set it up, switch mode, log out.
    const mayWhileOwed = /^\/dashboard\/(account|mode|logout)(\/|$)/.test(req.originalUrl.split('?')[0]!);
    if (signedIn.owesSecondFactorSetup && !mayWhileOwed) {
      if (req.method === 'GET') return res.redirect(303, '/dashboard/account');
      return next(new ConsoleRefusal(403, 'second factor setup owed'));
    }
    next();
  };
}

function sameToken(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Every state-changing request carries the session's CSRF token in `_csrf`, and, when the
 * browser says where it comes from, comes from this console's own origin.
 */
export function csrfChecked(publicOrigin: string): RequestHandler {
  return (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    const origin = req.get('origin');
    const signedIn = contextOf(req).signedIn;
    const body = req.body as Record<string, unknown> | undefined;
    if ((origin !== undefined && origin !== publicOrigin) || signedIn === undefined || !sameToken(body?._csrf, signedIn.csrfToken)) {
      return next(new ConsoleRefusal(403, 'CSRF token missing or wrong', 'csrf'));
    }
    next();
  };
}

/** The login form's own token (no session yet): a cookie that must match the form's field. */
export function loginCsrfMatches(req: Request, policy: CookiePolicy): boolean {
  const cookie = cookiesOf(req).get(loginCsrfCookieName(policy));
  return cookie !== undefined && sameToken((req.body as Record<string, unknown> | undefined)?._csrf, cookie);
}

/** Refuses, before anything else is judged, a person whose role does not allow the action. */
export function requireRole(role: UserRole): RequestHandler {
  return (req, _res, next) => {
    if (!mayAct(signedInOf(req).actor.role, role)) return next(new ConsoleRefusal(403, `needs role ${role}`, 'forbidden', role));
    next();
  };
}

/** A string field of a form; arrays and absent fields are undefined. */
export function field(req: Request, name: string): string | undefined {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

export function queryText(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** An id from a path, or the 404 of a malformed one. */
export function pathId(req: Request, name = 'id'): string {
  const id = req.params[name];
  if (typeof id !== 'string') throw new ConsoleRefusal(404, 'no id');
  return id;
}

/** Every value of a repeated form field (checkboxes). */
export function fieldList(req: Request, name: string): string[] {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** An amount typed in a search form (commas, ¥ and spaces allowed), or undefined. */
export function amountIn(text: string | undefined): number | undefined {
  const digits = text?.replace(/[,¥\s]/g, '');
  return digits !== undefined && /^\d{1,10}$/.test(digits) ? Number(digits) : undefined;
}

/** A list's `after` cursor (a seq), or undefined when absent or malformed. */
export function cursorIn(text: string | undefined): bigint | undefined {
  return text !== undefined && /^\d{1,19}$/.test(text) ? BigInt(text) : undefined;
}

/** The start of the next day, for a search "to" date that includes its own day. */
export function nextDay(day: Date | undefined): Date | undefined {
  return day === undefined ? undefined : new Date(day.getTime() + 24 * 60 * 60 * 1000);
}

/** The session a secret made by this request is shown to, once, by the page it redirects to. */
export function showToOf(req: Request): { sessionToken: string } {
  return { sessionToken: signedInOf(req).token };
}
