import { AppError, ORDER_STATUSES, REVERSAL_REASON_MAX, UpdateOrderRequest, type OrderStatus } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router, type Request } from 'express';
import { pastReversalWindow } from '../../domain/orders';
import { cancelOrder, markOrderPaid, reverseOrder, updateOrder } from '../../use-cases/change-order';
import { orderWithTimeline, searchOrdersOf } from '../../use-cases/console-reads';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { findVisibleOrder } from '../../use-cases/read-orders';
import { tokyoDateInput } from '../format';
import { redirectDone, sendScreen } from '../render';
import { amountIn, auditContextOf, contextOf, cursorIn, field, nextDay, pathId, queryText, requireRole, signedInOf } from '../request';
import { OrderScreen } from '../screens/order-detail';
import { EditOrderScreen, OrderListScreen, ReverseScreen } from '../screens/orders';

const LIST_LIMIT = 50;

/** The order list and an order's screen; operators reverse, cancel, mark paid elsewhere and edit. */
export function orderRoutes(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/orders', async (req, res) => {
    const q = req.query as Record<string, string>;
    const { search, sort } = orderSearchIn(req);
    const slice = await searchOrdersOf(deps, signedInOf(req).actor, search);
    sendScreen(res, OrderListScreen, { ctx: contextOf(req), rows: slice.rows, next: slice.nextAfter, q, sort });
  });

  router.get('/dashboard/orders/:id', async (req, res) => {
    const shown = await orderWithTimeline(deps, signedInOf(req).actor, pathId(req));
    sendScreen(res, OrderScreen, { ctx: contextOf(req), ...shown, now: deps.clock.now() });
  });

  router.get('/dashboard/orders/:id/reverse', requireRole('operator'), async (req, res) => {
    const order = await findVisibleOrder(deps, signedInOf(req).actor, pathId(req));
    sendScreen(res, ReverseScreen, { ctx: contextOf(req), order, late: pastReversalWindow(order, deps.clock.now()) });
  });

  router.post('/dashboard/orders/:id/reverse', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const order = await findVisibleOrder(deps, actor, pathId(req));
    const reason = (field(req, 'reason') ?? '').trim().slice(0, REVERSAL_REASON_MAX);
    const late = pastReversalWindow(order, deps.clock.now());
    if (late && reason === '') return sendScreen(res, ReverseScreen, { ctx: contextOf(req), order, late, missingReason: true }, 400);
    await reverseOrder(deps, actor, order, reason === '' ? undefined : reason, auditContextOf(req));
    redirectDone(res, `/dashboard/orders/${order.id}`, 'reversed');
  });

  router.post('/dashboard/orders/:id/cancel', requireRole('operator'), async (req, res) => {
    const order = await findVisibleOrder(deps, signedInOf(req).actor, pathId(req));
    await cancelOrder(deps, order, auditContextOf(req));
    redirectDone(res, `/dashboard/orders/${order.id}`, 'canceled');
  });

  router.post('/dashboard/orders/:id/mark-paid', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const order = await findVisibleOrder(deps, actor, pathId(req));
    await markOrderPaid(deps, actor, order, {}, auditContextOf(req));
    redirectDone(res, `/dashboard/orders/${order.id}`, 'markedPaid');
  });

  router.get('/dashboard/orders/:id/edit', requireRole('operator'), async (req, res) => {
    const order = await findVisibleOrder(deps, signedInOf(req).actor, pathId(req));
    sendScreen(res, EditOrderScreen, { ctx: contextOf(req), order });
  });

  router.post('/dashboard/orders/:id/edit', requireRole('operator'), async (req, res) => {
    const ctx = contextOf(req);
    const order = await findVisibleOrder(deps, signedInOf(req).actor, pathId(req));
    const entered = { amount: field(req, 'amount') ?? '', payer_name: field(req, 'payer_name') ?? '', metadata: field(req, 'metadata') ?? '{}' };
    let change: UpdateOrderRequest;
    try {
      const metadata = JSON.parse(entered.metadata) as unknown;
      change = parseInput(UpdateOrderRequest, { amount: amountIn(entered.amount) ?? -1, payer_name: entered.payer_name, metadata });
    } catch (error) {
      if (!(error instanceof SyntaxError || error instanceof AppError)) throw error;
      // The refusal in the page's language, on the form, with what was entered.
      const o = ctx.t.orders;
      const param = error instanceof AppError ? error.param : 'metadata';
      const problem = param === 'amount' ? o.invalidAmount : param === 'payer_name' ? o.invalidPayerName : o.invalidMetadata;
      return sendScreen(res, EditOrderScreen, { ctx, order, problem, entered }, 400);
    }
    await updateOrder(deps, order, change, auditContextOf(req));
    redirectDone(res, `/dashboard/orders/${order.id}`, 'edited');
  });

  return router;
}

/** The order list's filters, order and page, as its query gives them. */
function orderSearchIn(req: Request) {
  const status = ORDER_STATUSES.includes(req.query.status as OrderStatus) ? (req.query.status as OrderStatus) : undefined;
  const externalId = queryText(req, 'external_id');
  const payerName = queryText(req, 'payer_name');
  const amountFrom = amountIn(queryText(req, 'amount_from'));
  const amountTo = amountIn(queryText(req, 'amount_to'));
  const from = tokyoDateInput(queryText(req, 'from'));
  const to = nextDay(tokyoDateInput(queryText(req, 'to')));
  const after = cursorIn(queryText(req, 'after'));
  // Newest first unless asked otherwise: orders are looked up more than worked through.
  const sort = queryText(req, 'sort') === 'oldest' ? 'oldest' : 'newest';
  const search = {
    limit: LIST_LIMIT,
    oldestFirst: sort === 'oldest',
    ...(status === undefined ? {} : { status }),
    ...(externalId === undefined ? {} : { externalId }),
    ...(payerName === undefined ? {} : { payerName }),
    ...(amountFrom === undefined ? {} : { amountFrom }),
    ...(amountTo === undefined ? {} : { amountTo }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...(after === undefined ? {} : { after }),
  };
  return { search, sort } as const;
}
