import { MODES, type Mode } from '@pmatch/contracts';
import type { Logger } from '@pmatch/platform';
import { Router, type Request, type Response } from 'express';
import {
  findSetupUser,
  isSetupToken,
  logIn,
  newToken,
  proveSecondFactor,
  requestPasswordReset,
  setPassword,
  type ConsoleAppDeps,
} from '../../use-cases/console-login';
import { logOut, switchMode } from '../../use-cases/console-session';
import { numberText } from '../format';
import { sendScreen } from '../render';
import {
  ConsoleRefusal,
  auditContextOf,
  clearLegacySessionCookie,
  clearSessionCookie,
  contextOf,
  cookieOptions,
  cookiesOf,
  csrfChecked,
  field,
  loginCsrfCookieName,
  loginCsrfMatches,
  sessionCookieName,
  sessionEndedNow,
  setupCookieName,
  signedInOf,
  signedInPage,
  type CookiePolicy,
} from '../request';
import { ForgotPasswordScreen, LoginScreen, SecondFactorScreen, SetupPasswordScreen } from '../screens/auth';

/** Log-in, the second factor, log-out, password set-up and reset, and the mode switch. */
export function authRoutes(deps: ConsoleAppDeps, policy: CookiePolicy, publicOrigin: string, logger: Logger): Router {
  const router = Router();
  addLogInRoutes(router, deps, policy, publicOrigin);
  addSecondFactorRoutes(router, deps, policy, publicOrigin);

  router.post('/dashboard/logout', csrfChecked(publicOrigin), async (req, res) => {
    await logOut(deps, signedInOf(req).token, auditContextOf(req));
    clearSessionCookie(res, policy);
    res.redirect(303, '/dashboard/login?done=logout');
  });

  addPasswordSetupRoutes(router, deps, policy);
  addPasswordResetRoutes(router, deps, policy, publicOrigin, logger);

  router.post('/dashboard/mode', signedInPage(), csrfChecked(publicOrigin), async (req, res) => {
    const signedIn = signedInOf(req);
    const mode = field(req, 'mode');
    if (!MODES.includes(mode as Mode)) throw new ConsoleRefusal(404, 'no such mode');
    await switchMode(deps, signedIn.token, mode as Mode);
    res.redirect(303, '/dashboard/');
  });

  return router;
}

/** A new token for a form posted without a session (log-in, password set-up and reset), set as the cookie its field must match. */
function loginToken(res: Response, policy: CookiePolicy): string {
  const token = newToken();
  res.cookie(loginCsrfCookieName(policy), token, cookieOptions(policy, 'strict'));
  return token;
}

/** A form posted without a session must carry its own token and, when the browser names its origin, come from the console. */
function refuseForeignForm(req: Request, policy: CookiePolicy, publicOrigin: string): void {
  const origin = req.get('origin');
  if (!loginCsrfMatches(req, policy) || (origin !== undefined && origin !== publicOrigin)) throw new ConsoleRefusal(403, 'form CSRF', 'csrf');
}

/** The log-in form and its answer: a new session, still waiting for the second factor if the person has one. */
function addLogInRoutes(router: Router, deps: ConsoleAppDeps, policy: CookiePolicy, publicOrigin: string): void {
  router.get('/dashboard/login', (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    const message =
      req.query.expired === '1' || sessionEndedNow(req)
        ? { kind: 'info' as const, text: t.login.expired }
        : req.query.done === 'logout'
          ? { kind: 'success' as const, text: t.login.loggedOut }
          : req.query.done === 'password'
            ? { kind: 'success' as const, text: t.setup.done }
            : req.query.problem === 'second_factor_ended'
              ? { kind: 'error' as const, text: t.login.secondFactorEnded }
              : req.query.problem === 'throttled'
                ? { kind: 'error' as const, text: t.login.throttled }
                : undefined;
    sendScreen(res, LoginScreen, { ctx, csrf: loginToken(res, policy), ...(message ? { message } : {}) });
  });

  router.post('/dashboard/login', async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    const email = (field(req, 'email') ?? '').slice(0, 254);
    const password = (field(req, 'password') ?? '').slice(0, 1024);
    refuseForeignForm(req, policy, publicOrigin);
    const mode: Mode = ctx.signedIn?.mode ?? 'test';
    const outcome = await logIn(deps, deps.throttles.login, {
      email,
      password,
      ip: ctx.ip,
      mode,
      ...(ctx.signedIn === undefined ? {} : { previousToken: ctx.signedIn.token }),
    });
    if (outcome.outcome !== 'logged_in') {
      const status = outcome.outcome === 'throttled' ? 429 : outcome.outcome === 'unavailable' ? 503 : 401;
      const text = outcome.outcome === 'throttled' ? t.login.throttled : outcome.outcome === 'unavailable' ? t.login.unavailable : t.login.failed;
      return sendScreen(res, LoginScreen, { ctx, csrf: loginToken(res, policy), email, message: { kind: 'error', text } }, status);
    }
    res.clearCookie(loginCsrfCookieName(policy), cookieOptions(policy, 'strict'));
    clearLegacySessionCookie(res, policy);
    res.cookie(sessionCookieName(policy), outcome.token, cookieOptions(policy));
    res.redirect(303, outcome.secondFactorPending ? '/dashboard/login/second-factor' : '/dashboard/');
  });
}

/**
 * The code from the authenticator app (or a recovery code), asked of a session waiting for it;
 * given, the session is replaced by a full one. Too many wrong codes end the log-in.
 */
function addSecondFactorRoutes(router: Router, deps: ConsoleAppDeps, policy: CookiePolicy, publicOrigin: string): void {
  router.get('/dashboard/login/second-factor', (req, res) => {
    const ctx = contextOf(req);
    if (ctx.signedIn?.session.secondFactorPending !== true) return res.redirect(303, '/dashboard/login');
    sendScreen(res, SecondFactorScreen, { ctx });
  });

  router.post('/dashboard/login/second-factor', csrfChecked(publicOrigin), async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    const signedIn = signedInOf(req);
    if (!signedIn.session.secondFactorPending) return res.redirect(303, '/dashboard/');
    const proof = await proveSecondFactor(deps, deps.throttles.login, signedIn, (field(req, 'code') ?? '').slice(0, 64), ctx.ip);
    switch (proof.outcome) {
      case 'proven':
        res.cookie(sessionCookieName(policy), proof.token, cookieOptions(policy));
        return res.redirect(303, '/dashboard/');
      case 'wrong':
        return sendScreen(res, SecondFactorScreen, { ctx, problem: t.login.triesLeft(numberText(proof.triesLeft, ctx.language)) }, 401);
      case 'unavailable':
        return sendScreen(res, SecondFactorScreen, { ctx, problem: t.login.unavailable }, 503);
      case 'ended':
      case 'throttled':
        clearSessionCookie(res, policy);
        return res.redirect(303, `/dashboard/login?problem=${proof.outcome === 'ended' ? 'second_factor_ended' : 'throttled'}`);
    }
  });
}

/** How long a browser keeps a set-up link's token after opening it (the link itself may live longer). */
const SETUP_COOKIE_MS = 60 * 60 * 1000;
const SETUP_PATH = '/dashboard/setup-password';

/**
 * The page a set-up link opens, where a person sets a password once. The link carries its token in
 * the query; the first request trades it for a cookie of the set-up page alone and redirects to the
 * page without it, so the token stays out of the address bar, the history and any Referer, and no
 * log of ours writes it (docs/decisions/0155-console-cookies-scoped-to-the-console.md).
 */
function addPasswordSetupRoutes(router: Router, deps: ConsoleAppDeps, policy: CookiePolicy): void {
  const takeToken = (res: Response, token: unknown) => {
    if (typeof token === 'string' && isSetupToken(token)) {
      res.cookie(setupCookieName(policy), token, { ...cookieOptions(policy, 'lax', SETUP_PATH), maxAge: SETUP_COOKIE_MS });
    }
    res.redirect(303, SETUP_PATH);
  };
  const tokenOf = (req: Request) => cookiesOf(req).get(setupCookieName(policy)) ?? '';

  router.get(SETUP_PATH, async (req, res) => {
    if (req.query.token !== undefined) return takeToken(res, req.query.token);
    const ctx = contextOf(req);
    const user = await findSetupUser(deps, tokenOf(req));
    sendScreen(res, SetupPasswordScreen, { ctx, email: user?.email ?? null, csrf: loginToken(res, policy) }, user === null ? 404 : 200);
  });

  // Links made before the token moved to the query: the same trade.
  router.get(`${SETUP_PATH}/:token`, (req, res) => takeToken(res, req.params.token));

  router.post(SETUP_PATH, async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    if (!loginCsrfMatches(req, policy)) throw new ConsoleRefusal(403, 'setup CSRF', 'csrf');
    const token = tokenOf(req);
    const outcome = await setPassword(deps, deps.throttles.login, token, field(req, 'password') ?? '', field(req, 'password_again') ?? '', ctx.ip);
    if (outcome === 'done') {
      res.clearCookie(setupCookieName(policy), cookieOptions(policy, 'lax', SETUP_PATH));
      return res.redirect(303, '/dashboard/login?done=password');
    }
    if (outcome === 'address_taken') {
      return sendScreen(res, SetupPasswordScreen, { ctx, email: null, csrf: loginToken(res, policy), problem: t.setup.addressTaken }, 409);
    }
    const user = await findSetupUser(deps, token);
    const problem = { invalid: undefined, too_short: t.setup.tooShort, too_long: t.setup.tooLong, mismatch: t.setup.mismatch }[outcome];
    sendScreen(
      res,
      SetupPasswordScreen,
      { ctx, email: user?.email ?? null, csrf: loginToken(res, policy), ...(problem ? { problem } : {}) },
      outcome === 'invalid' ? 404 : 400,
    );
  });
}

/** "Forgot your password?": an address in, the same answer out whether or not it has an account. */
function addPasswordResetRoutes(router: Router, deps: ConsoleAppDeps, policy: CookiePolicy, publicOrigin: string, logger: Logger): void {
  router.get('/dashboard/password/forgot', (req, res) => {
    const ctx = contextOf(req);
    const message = req.query.done === 'sent' ? { kind: 'success' as const, text: ctx.t.forgot.sent } : undefined;
    sendScreen(res, ForgotPasswordScreen, { ctx, csrf: loginToken(res, policy), message });
  });

  router.post('/dashboard/password/forgot', async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    refuseForeignForm(req, policy, publicOrigin);
    const email = (field(req, 'email') ?? '').trim().toLowerCase();
    const refuse = (status: number, text: string) =>
      sendScreen(res, ForgotPasswordScreen, { ctx, csrf: loginToken(res, policy), message: { kind: 'error', text } }, status);
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) return refuse(400, t.forgot.invalidEmail);
    const { outcome, queued } = await requestPasswordReset(deps, deps.throttles.passwordReset, { email, ip: ctx.ip });
    queued.catch((error: unknown) => logger.error({ err: error, requestId: req.requestId }, 'password reset e-mail not queued'));
    if (outcome === 'throttled') return refuse(429, t.forgot.throttled);
    if (outcome === 'unavailable') return refuse(503, t.security.unavailable);
    res.redirect(303, '/dashboard/password/forgot?done=sent');
  });
}
