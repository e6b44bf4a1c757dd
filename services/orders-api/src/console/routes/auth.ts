import { MODES, type Mode } from '@pmatch/contracts';
import { Router, type Response } from 'express';
import { findSetupUser, logIn, newToken, proveSecondFactor, setPassword, type ConsoleDeps, type LoginThrottle } from '../../use-cases/console-login';
import { logOut, switchMode } from '../../use-cases/console-session';
import {
  auditContextOf,
  contextOf,
  cookieOptions,
  csrfChecked,
  field,
  loginCsrfCookieName,
  loginCsrfMatches,
  sessionCookieName,
  sessionEndedNow,
  signedInOf,
  signedInPage,
  type CookiePolicy,
  ConsoleRefusal,
} from '../request';
import { sendScreen } from '../render';
import { LoginScreen, SecondFactorScreen, SetupPasswordScreen } from '../screens/auth';

/** Log-in, the second factor, log-out, password setup and the mode switch. */
export function authRoutes(deps: ConsoleDeps, throttle: LoginThrottle, policy: CookiePolicy, publicOrigin: string): Router {
  const router = Router();
  addLogInRoutes(router, deps, throttle, policy, publicOrigin);
  addSecondFactorRoutes(router, deps, policy, publicOrigin);

  router.post('/dashboard/logout', csrfChecked(publicOrigin), async (req, res) => {
    await logOut(deps, signedInOf(req).token, auditContextOf(req));
    res.clearCookie(sessionCookieName(policy), cookieOptions(policy));
    res.redirect(303, '/dashboard/login?done=logout');
  });

  addPasswordSetupRoutes(router, deps, policy);

  router.post('/dashboard/mode', signedInPage(), csrfChecked(publicOrigin), async (req, res) => {
    const signedIn = signedInOf(req);
    const mode = field(req, 'mode');
    if (!MODES.includes(mode as Mode)) throw new ConsoleRefusal(404, 'no such mode');
    await switchMode(deps, signedIn.token, mode as Mode);
    res.redirect(303, '/dashboard/');
  });

  return router;
}

/** A new token for a form posted without a session (log-in, password setup), set as the cookie its field must match. */
function loginToken(res: Response, policy: CookiePolicy): string {
  const token = newToken();
  res.cookie(loginCsrfCookieName(policy), token, cookieOptions(policy, 'strict'));
  return token;
}

/** The log-in form and its answer: a new session, still waiting for the second factor if the person has one. */
function addLogInRoutes(router: Router, deps: ConsoleDeps, throttle: LoginThrottle, policy: CookiePolicy, publicOrigin: string): void {
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
            : undefined;
    sendScreen(res, LoginScreen, { ctx, csrf: loginToken(res, policy), ...(message ? { message } : {}) });
  });

  router.post('/dashboard/login', async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    const email = (field(req, 'email') ?? '').slice(0, 254);
    const password = (field(req, 'password') ?? '').slice(0, 1024);
    const origin = req.get('origin');
    if (!loginCsrfMatches(req, policy) || (origin !== undefined && origin !== publicOrigin)) throw new ConsoleRefusal(403, 'login CSRF', 'csrf');
    const mode: Mode = ctx.signedIn?.mode ?? 'test';
    const outcome = await logIn(deps, throttle, {
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
    res.cookie(sessionCookieName(policy), outcome.token, cookieOptions(policy));
    res.redirect(303, outcome.secondFactorPending ? '/dashboard/login/second-factor' : '/dashboard/');
  });
}

/** The code from the authenticator app, asked of a session waiting for it; given, the session is replaced by a full one. */
function addSecondFactorRoutes(router: Router, deps: ConsoleDeps, policy: CookiePolicy, publicOrigin: string): void {
  router.get('/dashboard/login/second-factor', (req, res) => {
    const ctx = contextOf(req);
    if (ctx.signedIn?.session.secondFactorPending !== true) return res.redirect(303, '/dashboard/login');
    sendScreen(res, SecondFactorScreen, { ctx, failed: false });
  });

  router.post('/dashboard/login/second-factor', csrfChecked(publicOrigin), async (req, res) => {
    const ctx = contextOf(req);
    const signedIn = signedInOf(req);
    if (!signedIn.session.secondFactorPending) return res.redirect(303, '/dashboard/');
    const proof = await proveSecondFactor(deps, signedIn, field(req, 'code') ?? '', ctx.ip);
    if (!proof.proven) return sendScreen(res, SecondFactorScreen, { ctx, failed: true }, 401);
    res.cookie(sessionCookieName(policy), proof.token, cookieOptions(policy));
    res.redirect(303, '/dashboard/');
  });
}

/** The page an invitation's link opens, where the invited person sets a password once. */
function addPasswordSetupRoutes(router: Router, deps: ConsoleDeps, policy: CookiePolicy): void {
  router.get('/dashboard/setup-password/:token', async (req, res) => {
    const ctx = contextOf(req);
    const user = await findSetupUser(deps, req.params.token);
    sendScreen(res, SetupPasswordScreen, { ctx, email: user?.email ?? null, csrf: loginToken(res, policy) }, user === null ? 404 : 200);
  });

  router.post('/dashboard/setup-password/:token', async (req, res) => {
    const ctx = contextOf(req);
    if (!loginCsrfMatches(req, policy)) throw new ConsoleRefusal(403, 'setup CSRF', 'csrf');
    const outcome = await setPassword(deps, req.params.token, field(req, 'password') ?? '', field(req, 'password_again') ?? '', ctx.ip);
    if (outcome === 'done') return res.redirect(303, '/dashboard/login?done=password');
    const user = await findSetupUser(deps, req.params.token);
    const problem = { invalid: undefined, too_short: ctx.t.setup.tooShort, too_long: ctx.t.setup.tooLong, mismatch: ctx.t.setup.mismatch }[outcome];
    sendScreen(
      res,
      SetupPasswordScreen,
      { ctx, email: user?.email ?? null, csrf: loginToken(res, policy), ...(problem ? { problem } : {}) },
      outcome === 'invalid' ? 404 : 400,
    );
  });
}
