import {
  AppError,
  CreateOrderRequest,
  EmptyRequest,
  MarkPaidRequest,
  OrderId,
  OrderListQuery,
  UpdateOrderRequest,
} from '@pmatch/contracts';
import {
  insertOrderUnlessExternalIdTaken,
  orderTimes,
  orderView,
  type Database,
  type NewOrder,
  type OrderRow,
  type OutboxHandOver,
  type Prisma,
  type PrismaClient,
  type Sql,
} from '@pmatch/db';
import { parseInput, type Clock } from '@pmatch/platform';
import { Router, type Request } from 'express';
import { resolveBankAccount, type AuthContext } from '../domain/auth';
import { sameOrderContent } from '../domain/orders';
import { cancelOrder, changeOpenOrder, findOrder, findOrderByExternalId, listOrders, newOrderWriter } from '../data/orders';
import { authOf, reauthenticate, type ApiKeys } from './auth';
import { answerOnce, idempotencyKeyOf, type Answer } from './idempotency';
import { pathId } from './ids';
import type { MatcherClient } from './matcher-client';

export interface OrdersDeps {
  prisma: PrismaClient;
  /** Plain SQL for POST /v1/orders and for reading one order, the hot paths; the other routes use Prisma. */
  database: Database;
  clock: Clock;
  publicBaseUrl: string;
  matcher: MatcherClient;
  /** Called after a commit that wrote outbox rows to be claimed (`OutboxRelay.nudge`). */
  onRecorded: () => void;
  /** Takes the outbox rows of new orders written together, once committed (`OutboxRelay.publishLeased`). */
  handOver: OutboxHandOver;
  keys: ApiKeys;
  /** `ORDER_WRITE_GATHER_MS`. */
  orderWriteGatherMs: number;
}

/**
 * The one request that may begin with a cached key (`ApiKeys`): a new order without an
 * Idempotency-Key, whose write checks the key in its statement. The path is compared as sent
 * (routing ignores case and a trailing slash): any other spelling reads the key.
 */
export function createsOrderWithoutIdempotencyKey(req: Request): boolean {
  return req.method === 'POST' && req.originalUrl.split('?')[0] === '/v1/orders' && req.get('idempotency-key') === undefined;
}

export function ordersRouter(deps: OrdersDeps): Router {
  const router = Router();
  const view = (row: OrderRow) => orderView(row, deps.publicBaseUrl);
  const writeNewOrder = newOrderWriter(deps.database.sql, deps.publicBaseUrl, deps.handOver, deps.orderWriteGatherMs);

  router.post('/v1/orders', async (req, res) => {
    const auth = authOf(req);
    let attempt = await attemptNewOrder(req, auth).catch((error: unknown) => {
      if (auth.cached && (error instanceof AppError || error instanceof NotWrittenWithCachedKey)) return undefined;
      throw error;
    });
    // A cached key is trusted only by the write that checked it (`ApiKeys`): any other outcome of
    // a request that began with one (a refusal, no order written) is answered again from the key
    // read now. Nothing was written, so the second attempt answers as if it were the first.
    if (attempt === undefined || (auth.cached && !attempt.keyCheckedByWrite)) attempt = await attemptNewOrder(req, await reauthenticate(deps.keys, req));
    const { answer, writtenInTransaction } = attempt;
    if (answer.replayed) res.setHeader('Idempotent-Replayed', 'true');
    // Orders written together hand their messages over; one written in a transaction leaves them to be claimed.
    else if (answer.status === 201 && writtenInTransaction) deps.onRecorded();
    res.status(answer.status).json(answer.body);
  });

  async function attemptNewOrder(req: Request, auth: AuthContext) {
    const key = idempotencyKeyOf(req);
    const request = parseInput(CreateOrderRequest, req.body);
    const now = deps.clock.now();
    let writtenInTransaction = false;
    let keyCheckedByWrite = false;
    const cachedKey = auth.cached ? { id: auth.keyId, accountIds: auth.accountIds } : undefined;
    const answer = await answerOnce(deps.database, { req, auth, key, now }, (sql, inTransaction) => {
      writtenInTransaction = inTransaction;
      const insert = inTransaction
        ? (order: NewOrder) => insertOrderUnlessExternalIdTaken(sql, order, now, deps.publicBaseUrl)
        : async (order: NewOrder) => {
            const row = await writeNewOrder({ order, now, ...(cachedKey === undefined ? {} : { cachedKey }) });
            if (cachedKey === undefined) return row;
            // Not written: its external_id is taken, or the key changed. Only a key read now can tell.
            if (row === null) throw new NotWrittenWithCachedKey();
            keyCheckedByWrite = true;
            return row;
          };
      return createOrder(sql, insert, auth, request, now);
    });
    return { answer, writtenInTransaction, keyCheckedByWrite };
  }

  /**
   * A new order is 201. An external_id already used is answered with its order (200) when the
   * request asks for the same order, else refused; either way nothing is overwritten. Its one write
   * (`insert`) is one statement, so it needs no transaction of its own (see `answerOnce`).
   */
  async function createOrder(
    sql: Sql,
    insert: (order: NewOrder) => Promise<OrderRow | null>,
    auth: AuthContext,
    request: CreateOrderRequest,
    now: Date,
  ): Promise<Answer> {
    const bankAccountId = resolveBankAccount(auth, request.bank_account_id);
    const times = orderTimes(
      {
        orderedAt: request.ordered_at === undefined ? undefined : new Date(request.ordered_at),
        expiresAt: request.expires_at === undefined ? undefined : new Date(request.expires_at),
      },
      now,
    );
    const row = await insert({
      organisationId: auth.organisationId,
      mode: auth.mode,
      bankAccountId,
      amount: request.amount,
      payerName: request.payer_name,
      externalId: request.external_id,
      itemName: request.item_name,
      orderedAt: times.orderedAt,
      expiresAt: times.expiresAt,
      metadata: request.metadata ?? {},
      source: null,
    });
    if (row !== null) return { status: 201, body: view(row) };
    const existing = await findOrderByExternalId(sql, auth, request.external_id);
    if (existing === null) throw new Error('an order insert found a conflict, yet no order has its external_id');
    if (!sameOrderContent(existing, request, bankAccountId)) {
      throw new AppError('external_id_conflict', 'An order with this external_id already exists with different content.', { param: 'external_id' });
    }
    return { status: 200, body: view(existing) };
  }

  router.get('/v1/orders', async (req, res) => {
    const query = parseInput(OrderListQuery, req.query, 'query');
    const page = await listOrders(deps.prisma, authOf(req), {
      limit: query.limit,
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(query.external_id === undefined ? {} : { externalId: query.external_id }),
      ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
    });
    if (page === undefined) throw new AppError('parameter_invalid', `No such order: ${query.starting_after}.`, { param: 'starting_after' });
    res.json({ object: 'list', data: page.rows.map(view), has_more: page.hasMore });
  });

  router.get('/v1/orders/:id', async (req, res) => {
    res.json(view(await visibleOrder(deps.database.sql, authOf(req), req.params.id)));
  });

  router.patch('/v1/orders/:id', async (req, res) => {
    const auth = authOf(req);
    const order = await visibleOrder(deps.database.sql, auth, req.params.id);
    const change = parseInput(UpdateOrderRequest, req.body);
    assertEditable(order, ['open'], 'changed');
    const data: Prisma.OrderUpdateManyMutationInput = {
      ...(change.amount === undefined ? {} : { amount: BigInt(change.amount) }),
      ...(change.payer_name === undefined ? {} : { payerName: change.payer_name }),
      ...(change.metadata === undefined ? {} : { metadata: change.metadata }),
    };
    const row = await changeOpenOrder(deps.prisma, order.id, data, deps.clock.now(), deps.publicBaseUrl);
    if (row === null) throw notOpen('changed');
    deps.onRecorded();
    res.json(view(row));
  });

  router.post('/v1/orders/:id/cancel', async (req, res) => {
    const auth = authOf(req);
    const order = await visibleOrder(deps.database.sql, auth, req.params.id);
    parseInput(EmptyRequest, req.body);
    assertEditable(order, ['open', 'expired'], 'canceled');
    const row = await cancelOrder(deps.prisma, order.id, deps.clock.now(), deps.publicBaseUrl);
    if (row === null) throw notOpen('canceled');
    deps.onRecorded();
    res.json(view(row));
  });

  router.post('/v1/orders/:id/reverse', async (req, res) => {
    const auth = authOf(req);
    const order = await visibleOrder(deps.database.sql, auth, req.params.id);
    parseInput(EmptyRequest, req.body);
    res.json(await deps.matcher.orderCommand({ type: 'order.reverse', organisation_id: auth.organisationId, mode: auth.mode, order_id: order.id }));
  });

  router.post('/v1/orders/:id/mark-paid', async (req, res) => {
    const auth = authOf(req);
    const order = await visibleOrder(deps.database.sql, auth, req.params.id);
    const request = parseInput(MarkPaidRequest, req.body);
    if (order.source !== null) throw notOpen('marked paid');
    res.json(
      await deps.matcher.orderCommand({
        type: 'order.mark_paid',
        organisation_id: auth.organisationId,
        mode: auth.mode,
        order_id: order.id,
        trigger: 'api',
        ...(request.paid_at === undefined ? {} : { paid_at: request.paid_at }),
      }),
    );
  });

  return router;
}

/** A new order of a request with a cached key was not written: the request runs again with its key read. */
class NotWrittenWithCachedKey extends Error {}

async function visibleOrder(sql: Sql, auth: AuthContext, rawId: string | undefined): Promise<OrderRow> {
  const id = pathId(OrderId, rawId, 'order');
  const row = await findOrder(sql, auth, id);
  if (row === null) throw new AppError('resource_missing', `No such order: ${id}.`, { param: 'id' });
  return row;
}

/** Orders from a shop platform are managed there; through the API they are never open to change. */
function assertEditable(order: OrderRow, statuses: string[], what: string): void {
  if (order.source !== null || !statuses.includes(order.status)) throw notOpen(what);
}

function notOpen(what: string): AppError {
  return new AppError('order_not_open', `The order cannot be ${what}: it is not open, or it is managed by a shop platform.`);
}
