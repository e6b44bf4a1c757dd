import type { Logger, RateLimiter } from '@pmatch/platform';
import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import { h } from 'preact';
import { documentOf } from '../buyer-pages/document';
import { PaymentLinkPage } from '../buyer-pages/payment-link-page';
import type { OrdersApiDeps } from '../use-cases/deps';
import { showPaymentLink, submitPaymentLinkForm, type LinkPageAnswer } from '../use-cases/order-at-payment-link';
import { buyerLanguageOf } from './buyer-language';
import { buyerPageHeaders, sendNotFound, sendPage } from './payment-page';

/** The page posts its own form and nothing else leaves it: the payment page's policy, with form-action 'self'. */
const SECURITY_HEADERS = buyerPageHeaders({ formAction: "'self'" });

export interface PaymentLinkPageOptions {
  /** Orders per buyer address (`PAYMENT_LINK_ORDERS_PER_HOUR`), one token per order. */
  limiter: RateLimiter;
  logger: Logger;
}

/**
 * The page of a payment link at /link/{token}: public, found only by its unguessable token. A
 * buyer gives the name they will transfer under and is sent to the new order's payment page.
 */
export function paymentLinkPageRouter(deps: OrdersApiDeps, options: PaymentLinkPageOptions): Router {
  const router = Router();

  router.use('/link', (_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });

  router.get('/link/:token', async (req, res) => {
    send(req, res, await showPaymentLink(deps, req.params.token ?? ''));
  });

  router.post('/link/:token', express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 }), async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const form = { step: body.step, payer_name: body.payer_name, attempt: body.attempt };
    const answer = await submitPaymentLinkForm(deps, req.params.token ?? '', form, languageOf(req), () => admit(options, req, res));
    send(req, res, answer);
  });

  router.all(['/link', '/link/*rest'], (req, res) => send(req, res, null));

  // A malformed path or an unreadable form body: to the buyer, one more address without a link.
  const malformed: ErrorRequestHandler = (error, req, res, next) => {
    const status = (error as { status?: unknown }).status;
    if (error instanceof URIError || (typeof status === 'number' && status >= 400 && status < 500)) send(req, res, null);
    else next(error);
  };
  router.use('/link', malformed);

  return router;
}

/**
 * Takes one order token of the buyer's address (`req.ip`: behind a proxy, what Express's
 * `trust proxy` makes of it). If Redis cannot answer, the order goes through: a limiter outage
 * must not stop buyers paying; it is logged.
 */
async function admit(options: PaymentLinkPageOptions, req: Request, res: Response): Promise<boolean> {
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  try {
    const decision = await options.limiter.take(`payment-link:${address}`);
    if (!decision.allowed) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000))));
    return decision.allowed;
  } catch (error) {
    options.logger.warn({ err: error }, 'payment link limiter unavailable; order allowed');
    return true;
  }
}

const postedLanguage = (req: Request): unknown => (req.body as Record<string, unknown> | undefined)?.lang;
const languageOf = (req: Request) => buyerLanguageOf(req, postedLanguage(req));

function send(req: Request, res: Response, answer: LinkPageAnswer | null): void {
  if (answer === null) sendNotFound(req, res, postedLanguage(req));
  else if ('redirectTo' in answer) res.redirect(303, answer.redirectTo);
  else sendPage(res, answer.status, documentOf(h(PaymentLinkPage, { link: answer.link, step: answer.step, language: languageOf(req) })));
}
