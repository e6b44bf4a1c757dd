import { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import { h } from 'preact';
import { PAGE_STYLE_HASH, documentOf } from '../buyer-pages/document';
import { NotFoundPage, PaymentPage } from '../buyer-pages/payment-page';
import type { OrdersApiDeps } from '../use-cases/deps';
import { showPaymentPage } from '../use-cases/show-payment-page';
import { buyerLanguageOf } from './buyer-language';

/**
 * The page needs nothing but its own markup and one hashed style sheet, so everything else is
 * refused: no script can run even if escaping ever failed, no other site can frame the page, and
 * the token in the URL never leaves in a Referer. Strict-Transport-Security is sent because
 * browsers heed it only over HTTPS (where the service runs behind TLS) and ignore it over plain
 * HTTP; it is not extended to subdomains, which this service does not own.
 */
export function buyerPageHeaders(options: { formAction: string } = { formAction: "'none'" }): Record<string, string> {
  return {
    'Content-Security-Policy': [
      "default-src 'none'",
      `style-src '${PAGE_STYLE_HASH}'`,
      "img-src 'self' data:",
      "base-uri 'none'",
      `form-action ${options.formAction}`,
      "frame-ancestors 'none'",
    ].join('; '),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'X-Robots-Tag': 'noindex, nofollow',
    'Strict-Transport-Security': 'max-age=31536000',
    Vary: 'Accept-Language',
  };
}

const SECURITY_HEADERS = buyerPageHeaders();

/** The buyer's payment page at /pay/{token}: public, found only by its unguessable token. */
export function paymentPageRouter(deps: OrdersApiDeps): Router {
  const router = Router();

  // Set first, so that every answer under /pay carries them, a failure's error body included.
  router.use('/pay', (_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });

  router.get('/pay/:token', async (req, res) => {
    const shown = await showPaymentPage(deps, req.params.token ?? '');
    if (shown === null) sendNotFound(req, res);
    else sendPage(res, 200, documentOf(h(PaymentPage, { ...shown, language: buyerLanguageOf(req) })));
  });

  router.get(['/pay', '/pay/*rest'], sendNotFound);

  // Express fails a path like /pay/%ZZ before any handler runs; to the buyer it is one more
  // address without an order, not a server error.
  const malformedPath: ErrorRequestHandler = (error, req, res, next) => {
    if (error instanceof URIError) sendNotFound(req, res);
    else next(error);
  };
  router.use('/pay', malformedPath);

  return router;
}

/** The one page of every address under /pay or /link that leads to nothing. */
export function sendNotFound(req: Request, res: Response, posted?: unknown): void {
  sendPage(res, 404, documentOf(h(NotFoundPage, { language: buyerLanguageOf(req, posted) })));
}

export function sendPage(res: Response, status: number, markup: string): void {
  res.status(status).type('html').send(markup);
}
