import { CreateWebhookEndpointRequest, DeliveryLogQuery, EmptyRequest, ListQuery, ResendRequest, UpdateWebhookEndpointRequest } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import type { OrdersApiDeps } from '../use-cases/deps';
import {
  assertMayManageWebhookEndpoints,
  changeWebhookEndpoint,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  findVisibleWebhookEndpoint,
  getWebhookEndpoint,
  getWebhookEndpointList,
} from '../use-cases/manage-webhook-endpoints';
import { RotationLimitReached, revealWebhookSecret, rotateWebhookSecret } from '../use-cases/manage-webhook-secrets';
import { getDeliveryLog, resendWebhook, sendTestWebhook } from '../use-cases/webhook-deliveries';
import { actorOf } from './api-key-auth';

/** /v1/webhook-endpoints: endpoints per mode, their secrets, test events, the delivery log and resends. */
export function webhookEndpointsRouter(deps: OrdersApiDeps): Router {
  const router = Router();

  // Refused before anything else is judged.
  router.use('/v1/webhook-endpoints', (req, _res, next) => {
    assertMayManageWebhookEndpoints(actorOf(req));
    next();
  });

  router.post('/v1/webhook-endpoints', async (req, res) => {
    res.status(201).json(await createWebhookEndpoint(deps, actorOf(req), parseInput(CreateWebhookEndpointRequest, req.body)));
  });

  router.get('/v1/webhook-endpoints', async (req, res) => {
    res.json(await getWebhookEndpointList(deps, actorOf(req), parseInput(ListQuery, req.query, 'query')));
  });

  router.get('/v1/webhook-endpoints/:id', async (req, res) => {
    res.json(await getWebhookEndpoint(deps, actorOf(req), req.params.id));
  });

  router.patch('/v1/webhook-endpoints/:id', async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, actorOf(req), req.params.id);
    res.json(await changeWebhookEndpoint(deps, endpoint, parseInput(UpdateWebhookEndpointRequest, req.body)));
  });

  router.delete('/v1/webhook-endpoints/:id', async (req, res) => {
    res.json(await deleteWebhookEndpoint(deps, await findVisibleWebhookEndpoint(deps, actorOf(req), req.params.id)));
  });

  router.get('/v1/webhook-endpoints/:id/secret', async (req, res) => {
    res.json(await revealWebhookSecret(deps, actorOf(req), req.params.id));
  });

  router.post('/v1/webhook-endpoints/:id/rotate-secret', async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, actorOf(req), req.params.id);
    parseInput(EmptyRequest, req.body);
    try {
      res.json(await rotateWebhookSecret(deps, endpoint));
    } catch (error) {
      if (error instanceof RotationLimitReached) res.setHeader('Retry-After', String(error.retryAfterSeconds));
      throw error;
    }
  });

  router.post('/v1/webhook-endpoints/:id/test', async (req, res) => {
    const actor = actorOf(req);
    const endpoint = await findVisibleWebhookEndpoint(deps, actor, req.params.id);
    parseInput(EmptyRequest, req.body);
    res.status(202).json(await sendTestWebhook(deps, actor, endpoint));
  });

  router.get('/v1/webhook-endpoints/:id/deliveries', async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, actorOf(req), req.params.id);
    res.json(await getDeliveryLog(deps, endpoint, parseInput(DeliveryLogQuery, req.query, 'query')));
  });

  router.post('/v1/webhook-endpoints/:id/deliveries/resend', async (req, res) => {
    const actor = actorOf(req);
    const endpoint = await findVisibleWebhookEndpoint(deps, actor, req.params.id);
    res.status(202).json(await resendWebhook(deps, actor, endpoint, parseInput(ResendRequest, req.body)));
  });

  return router;
}
