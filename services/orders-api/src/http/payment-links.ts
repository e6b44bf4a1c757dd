import { CreatePaymentLinkRequest, EmptyRequest, ListQuery } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import type { OrdersApiDeps } from '../use-cases/deps';
import { createPaymentLink, deactivatePaymentLink, findVisiblePaymentLink, getPaymentLink, getPaymentLinkList } from '../use-cases/manage-payment-links';
import { actorOf } from './api-key-auth';

/** /v1/payment-links: links buyers order at, listed, read and deactivated. */
export function paymentLinksRouter(deps: OrdersApiDeps): Router {
  const router = Router();

  router.post('/v1/payment-links', async (req, res) => {
    res.status(201).json(await createPaymentLink(deps, actorOf(req), parseInput(CreatePaymentLinkRequest, req.body)));
  });

  router.get('/v1/payment-links', async (req, res) => {
    res.json(await getPaymentLinkList(deps, actorOf(req), parseInput(ListQuery, req.query, 'query')));
  });

  router.get('/v1/payment-links/:id', async (req, res) => {
    res.json(await getPaymentLink(deps, actorOf(req), req.params.id));
  });

  router.post('/v1/payment-links/:id/deactivate', async (req, res) => {
    const link = await findVisiblePaymentLink(deps, actorOf(req), req.params.id);
    parseInput(EmptyRequest, req.body);
    res.json(await deactivatePaymentLink(deps, link));
  });

  return router;
}
