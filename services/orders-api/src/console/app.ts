import { AppError } from '@pmatch/contracts';
import type { Logger } from '@pmatch/platform';
import express, { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import type { ConsoleThrottles } from '../data/login-throttle';
import type { OrdersApiDeps } from '../use-cases/deps';
import { CONSOLE_CSS, CONSOLE_JS } from './assets';
import { sendScreen } from './render';
import { ConsoleRefusal, consoleContext, contextOf, csrfChecked, signedInPage, type CookiePolicy } from './request';
import { authRoutes } from './routes/auth';
import { signedInRoutes } from './routes/index';
import { ErrorScreen } from './screens/auth';

/**
 * The console's answers may hold a merchant's data and its forms change it, so: no script or style
 * but the console's own files, no framing, no other site as a form's target, nothing cached, and
 * no cross-origin reads (no CORS header is ever sent).
 */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Robots-Tag': 'noindex, nofollow',
  'Strict-Transport-Security': 'max-age=31536000',
  Vary: 'Accept-Language, Cookie',
};

export interface ConsoleOptions {
  throttles: ConsoleThrottles;
  cookies: CookiePolicy;
  /** The console's own origin (from PUBLIC_BASE_URL): a state-changing request from another is refused. */
  publicOrigin: string;
  logger: Logger;
}

/** The seller console under /dashboard: server-rendered screens acting through the API's own use cases. */
export function consoleApp(deps: OrdersApiDeps, options: ConsoleOptions): Router {
  const router = Router();
  router.use('/dashboard', ((_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  }) as RequestHandler);
  router.get('/dashboard/assets/console.css', (_req, res) => {
    res.type('css').set('Cache-Control', 'no-cache').send(CONSOLE_CSS);
  });
  router.get('/dashboard/assets/console.js', (_req, res) => {
    res.type('js').set('Cache-Control', 'no-cache').send(CONSOLE_JS);
  });
  const consoleDeps = { ...deps, throttles: options.throttles };
  router.use('/dashboard', express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 }), consoleContext(deps, options.cookies));
  router.use(authRoutes(consoleDeps, options.cookies, options.publicOrigin, options.logger));
  router.use('/dashboard', signedInPage(), csrfChecked(options.publicOrigin));
  router.use(signedInRoutes(consoleDeps));
  router.use('/dashboard', ((req, _res, next) => next(new ConsoleRefusal(404, `no console page ${req.path}`))) as RequestHandler);
  router.use('/dashboard', consoleErrors(options.logger));
  return router;
}

/** Every failure under /dashboard becomes a console page in the person's language, never JSON or a stack trace. */
function consoleErrors(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (req.console === undefined) return next(error);
    // A streamed answer (a CSV file) that failed part-way: cut it off, so it never reads as whole.
    if (res.headersSent) {
      logger.error({ err: error, requestId: req.requestId, path: req.path }, 'console answer failed part-way');
      return void res.destroy();
    }
    const ctx = contextOf(req);
    const { t } = ctx;
    if (error instanceof ConsoleRefusal) {
      if (error.status === 401) return res.redirect(303, '/dashboard/login');
      const message =
        error.kind === 'csrf'
          ? t.errors.csrf
          : error.kind === 'not_found'
            ? t.errors.notFound
            : error.neededRole === undefined
              ? t.errors.forbidden
              : t.errors.forbiddenFor(t.roles[error.neededRole]!, t.roles[ctx.signedIn?.actor.role ?? 'viewer']!);
      return sendScreen(res, ErrorScreen, { ctx, message }, error.status);
    }
    if (error instanceof URIError) return sendScreen(res, ErrorScreen, { ctx, message: t.errors.notFound }, 404);
    if (error instanceof AppError && error.status < 500) {
      if (error.code === 'resource_missing') return sendScreen(res, ErrorScreen, { ctx, message: t.errors.notFound }, 404);
      if (error.code === 'insufficient_scope') return sendScreen(res, ErrorScreen, { ctx, message: t.errors.forbidden }, 403);
      // Each page speaks one language: the API's own (English) message only where no words of ours fit.
      const words = t.errors.codes[error.code];
      return sendScreen(res, ErrorScreen, { ctx, message: words ?? error.message }, error.status);
    }
    const status = error instanceof AppError && error.code === 'service_unavailable' ? 503 : 500;
    if (status === 500) logger.error({ err: error, requestId: req.requestId, path: req.path }, 'console request failed');
    sendScreen(res, ErrorScreen, { ctx, message: status === 503 ? t.errors.unavailable : t.errors.internal }, status);
  };
}
