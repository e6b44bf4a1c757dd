import { AppError, CreateOrderRequest, EmptyRequest, MarkPaidRequest, OrderListQuery, UpdateOrderRequest } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router, type Request } from 'express';
import { apiKeyActor, type ApiKeyAuth } from '../domain/api-key-auth';
import { cancelOrder, markOrderPaid, reverseOrder, updateOrder } from '../use-cases/change-order';
import { CachedKeyNotConfirmed, createOrder, type OrderCreated } from '../use-cases/create-order';
import type { OrdersApiDeps } from '../use-cases/deps';
import { findVisibleOrder, getOrder, getOrderList } from '../use-cases/read-orders';
import { actorOf, apiKeyAuthOf, reauthenticateApiKey, type ApiKeys } from './api-key-auth';
import { idempotencyKeyOf, idempotentRequest } from './idempotency';

/**
 * The one request that may begin with a cached key (`ApiKeys`): a new order without an
 * Idempotency-Key, whose write checks the key in its statement. The path is compared as sent
 * (routing ignores case and a trailing slash): any other spelling reads the key.
 */
export function createsOrderWithoutIdempotencyKey(req: Request): boolean {
  return req.method === 'POST' && req.originalUrl.split('?')[0] === '/v1/orders' && req.get('idempotency-key') === undefined;
}

export function ordersRouter(deps: OrdersApiDeps & { keys: ApiKeys }): Router {
  const router = Router();

  router.post('/v1/orders', async (req, res) => {
    const auth = apiKeyAuthOf(req);
    // A cached key is trusted only by the write that checked it: any other outcome (a refusal, no
    // order written) is answered again from the key read now, as if it were the first attempt.
    const result =
      (await create(req, auth).catch((error: unknown) => {
        if (auth.cached && (error instanceof AppError || error instanceof CachedKeyNotConfirmed)) return undefined;
        throw error;
      })) ?? (await create(req, await reauthenticateApiKey(deps.keys, req)));
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.status(result.created ? 201 : 200).json(result.order);
  });

  async function create(req: Request, auth: ApiKeyAuth): Promise<OrderCreated> {
    const key = idempotencyKeyOf(req);
    const request = parseInput(CreateOrderRequest, req.body);
    return createOrder(deps, apiKeyActor(auth), request, {
      idempotency: idempotentRequest(req, auth.keyId, key),
      cachedKey: auth.cached ? { id: auth.keyId, accountIds: auth.accountIds } : undefined,
    });
  }

  router.get('/v1/orders', async (req, res) => {
    res.json(await getOrderList(deps, actorOf(req), parseInput(OrderListQuery, req.query, 'query')));
  });

  router.get('/v1/orders/:id', async (req, res) => {
    res.json(await getOrder(deps, actorOf(req), req.params.id));
  });

  router.patch('/v1/orders/:id', async (req, res) => {
    const order = await findVisibleOrder(deps, actorOf(req), req.params.id);
    res.json(await updateOrder(deps, order, parseInput(UpdateOrderRequest, req.body)));
  });

  router.post('/v1/orders/:id/cancel', async (req, res) => {
    const order = await findVisibleOrder(deps, actorOf(req), req.params.id);
    parseInput(EmptyRequest, req.body);
    res.json(await cancelOrder(deps, order));
  });

  router.post('/v1/orders/:id/reverse', async (req, res) => {
    const actor = actorOf(req);
    const order = await findVisibleOrder(deps, actor, req.params.id);
    parseInput(EmptyRequest, req.body);
    res.json(await reverseOrder(deps, actor, order));
  });

  router.post('/v1/orders/:id/mark-paid', async (req, res) => {
    const actor = actorOf(req);
    const order = await findVisibleOrder(deps, actor, req.params.id);
    res.json(await markOrderPaid(deps, actor, order, parseInput(MarkPaidRequest, req.body)));
  });

  return router;
}
