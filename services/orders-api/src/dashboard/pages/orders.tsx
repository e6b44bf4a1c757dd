import { AppError, LIMITS, ORDER_STATUSES, Payment, REVERSAL_REASON_MAX, UpdateOrderRequest, type OrderStatus } from '@pmatch/contracts';
import type { EventRow, OrderRow } from '@pmatch/db';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import { eventsAbout, searchOrders } from '../../data/console-search';
import { recordAudit } from '../../use-cases/audit';
import { cancelOrder, markOrderPaid, reverseOrder, updateOrder } from '../../use-cases/change-order';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { findVisibleOrder } from '../../use-cases/read-orders';
import { tokyoDateInput, tokyoTime, yen } from '../format';
import { auditContextOf, contextOf, field, pathId, queryText, requireRole, signedInOf, type ConsoleRequestContext } from '../http';
import { redirectDone, sendPage } from '../render';
import { Badge, Facts, Field, Layout, Notice, Pager, PostForm, Table } from '../views/layout';
import { OrderDetail, pastReversalWindow } from './order-detail';

const PAGE_SIZE = 50;
const amountOf = (text: string | undefined) =>
  text !== undefined && /^\d{1,10}$/.test(text.replace(/[,¥\s]/g, '')) ? Number(text.replace(/[,¥\s]/g, '')) : undefined;

/** The order list and an order's page with its events; operators reverse, cancel, mark paid elsewhere and edit. */
export function orderPages(deps: OrdersApiDeps): Router {
  const router = Router();
  addOrderViewRoutes(router, deps);
  addReversalRoutes(router, deps);
  addOrderChangeRoutes(router, deps);
  return router;
}

/** The searchable, paged order list, and an order's page with its own events and those of its deposits. */
function addOrderViewRoutes(router: Router, deps: OrdersApiDeps): void {
  router.get('/dashboard/orders', async (req, res) => {
    const ctx = contextOf(req);
    const { actor } = signedInOf(req);
    const q = req.query as Record<string, string>;
    const status = ORDER_STATUSES.includes(q.status as OrderStatus) ? q.status : undefined;
    const from = tokyoDateInput(queryText(req, 'from'));
    const to = tokyoDateInput(queryText(req, 'to'));
    const after = queryText(req, 'after');
    const page = await searchOrders(deps.database.prisma, actor, {
      limit: PAGE_SIZE,
      ...(status === undefined ? {} : { status }),
      ...(queryText(req, 'external_id') === undefined ? {} : { externalId: queryText(req, 'external_id')! }),
      ...(queryText(req, 'payer_name') === undefined ? {} : { payerName: queryText(req, 'payer_name')! }),
      ...(amountOf(queryText(req, 'amount_from')) === undefined ? {} : { amountFrom: amountOf(queryText(req, 'amount_from'))! }),
      ...(amountOf(queryText(req, 'amount_to')) === undefined ? {} : { amountTo: amountOf(queryText(req, 'amount_to'))! }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to: new Date(to.getTime() + 24 * 60 * 60 * 1000) }),
      ...(after !== undefined && /^\d{1,19}$/.test(after) ? { before: BigInt(after) } : {}),
    });
    sendPage(res, <OrderList ctx={ctx} rows={page.rows} next={page.nextBefore} q={q} />);
  });

  router.get('/dashboard/orders/:id', async (req, res) => {
    const ctx = contextOf(req);
    const { actor } = signedInOf(req);
    const order = await findVisibleOrder(deps, actor, pathId(req));
    const events = await eventsAbout(deps.database.prisma, actor, [order.id]);
    const deposits = [...new Set(events.flatMap((e) => paymentsIn(e)).flatMap((p) => (p.transaction_id ? [p.transaction_id] : [])))];
    const depositEvents = await eventsAbout(deps.database.prisma, actor, deposits);
    const timeline = [...events, ...depositEvents].sort((a, b) => (a.seq < b.seq ? -1 : 1));
    sendPage(res, <OrderDetail ctx={ctx} order={order} timeline={timeline} now={deps.clock.now()} />);
  });
}

/** Reversing a payment (operators): after 24 hours only here, and only with a reason. */
function addReversalRoutes(router: Router, deps: OrdersApiDeps): void {
  router.get('/dashboard/orders/:id/reverse', requireRole('operator'), async (req, res) => {
    const ctx = contextOf(req);
    const order = await findVisibleOrder(deps, signedInOf(req).actor, pathId(req));
    sendPage(res, <ReversePage ctx={ctx} order={order} late={pastReversalWindow(order, deps.clock.now())} />);
  });

  router.post('/dashboard/orders/:id/reverse', requireRole('operator'), async (req, res) => {
    const ctx = contextOf(req);
    const { actor } = signedInOf(req);
    const order = await findVisibleOrder(deps, actor, pathId(req));
    const reason = (field(req, 'reason') ?? '').trim().slice(0, REVERSAL_REASON_MAX);
    const late = pastReversalWindow(order, deps.clock.now());
    if (late && reason === '') return sendPage(res, <ReversePage ctx={ctx} order={order} late missingReason />, 400);
    await reverseOrder(deps, actor, order, reason === '' ? undefined : reason);
    await recordAudit(deps, auditContextOf(req), 'order.reverse', order.id, { reason: reason === '' ? null : reason, after_24_hours: late });
    redirectDone(res, `/dashboard/orders/${order.id}`, 'reversed');
  });
}

/** Cancelling, marking paid elsewhere and editing an order (operators), each recorded in the audit log. */
function addOrderChangeRoutes(router: Router, deps: OrdersApiDeps): void {
  router.post('/dashboard/orders/:id/cancel', requireRole('operator'), async (req, res) => {
    const order = await findVisibleOrder(deps, signedInOf(req).actor, pathId(req));
    await cancelOrder(deps, order);
    await recordAudit(deps, auditContextOf(req), 'order.cancel', order.id, {});
    redirectDone(res, `/dashboard/orders/${order.id}`, 'canceled');
  });

  router.post('/dashboard/orders/:id/mark-paid', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const order = await findVisibleOrder(deps, actor, pathId(req));
    await markOrderPaid(deps, actor, order, {});
    await recordAudit(deps, auditContextOf(req), 'order.mark_paid', order.id, {});
    redirectDone(res, `/dashboard/orders/${order.id}`, 'markedPaid');
  });

  router.get('/dashboard/orders/:id/edit', requireRole('operator'), async (req, res) => {
    const order = await findVisibleOrder(deps, signedInOf(req).actor, pathId(req));
    sendPage(res, <EditPage ctx={contextOf(req)} order={order} />);
  });

  router.post('/dashboard/orders/:id/edit', requireRole('operator'), async (req, res) => {
    const ctx = contextOf(req);
    const order = await findVisibleOrder(deps, signedInOf(req).actor, pathId(req));
    let change: UpdateOrderRequest;
    try {
      const metadata = JSON.parse(field(req, 'metadata') ?? '{}') as unknown;
      change = parseInput(UpdateOrderRequest, { amount: amountOf(field(req, 'amount')) ?? -1, payer_name: field(req, 'payer_name') ?? '', metadata });
    } catch (error) {
      if (error instanceof SyntaxError || error instanceof AppError) {
        return sendPage(
          res,
          <EditPage ctx={ctx} order={order} problem={error instanceof AppError && error.param !== 'metadata' ? error.message : ctx.t.orders.invalidMetadata} />,
          400,
        );
      }
      throw error;
    }
    await updateOrder(deps, order, change);
    await recordAudit(deps, auditContextOf(req), 'order.update', order.id, { amount: change.amount, payer_name: change.payer_name });
    redirectDone(res, `/dashboard/orders/${order.id}`, 'edited');
  });
}

/** The payments an event carries: the order's own, and a reversal's previous one. */
function paymentsIn(event: EventRow): Payment[] {
  const data = event.data as { object?: { payment?: unknown }; previous_payment?: unknown };
  return [data.object?.payment, data.previous_payment].flatMap((p) => {
    const parsed = Payment.safeParse(p);
    return parsed.success ? [parsed.data] : [];
  });
}

function OrderList({ ctx, rows, next, q }: { ctx: ConsoleRequestContext; rows: OrderRow[]; next: bigint | undefined; q: Record<string, string> }) {
  const { t } = ctx;
  const o = t.orders;
  return (
    <Layout ctx={ctx} title={o.title} section="orders">
      <form method="get" action="/dashboard/orders" class="form-grid panel" role="search" aria-label={o.filters}>
        <label>
          {t.common.status}
          <select name="status">
            <option value="">{t.common.all}</option>
            {ORDER_STATUSES.map((s) => (
              <option value={s} selected={q.status === s}>
                {o.statuses[s]}
              </option>
            ))}
          </select>
        </label>
        <Field label={o.externalId} name="external_id" value={q.external_id} />
        <Field label={o.payerName} name="payer_name" value={q.payer_name} />
        <Field label={o.amountFrom} name="amount_from" inputMode="numeric" value={q.amount_from} />
        <Field label={o.amountTo} name="amount_to" inputMode="numeric" value={q.amount_to} />
        <Field label={t.common.from} name="from" type="date" value={q.from} />
        <Field label={t.common.to} name="to" type="date" value={q.to} />
        <button type="submit">{t.common.search}</button>
        <a href="/dashboard/orders">{t.common.clear}</a>
      </form>
      <Table
        ctx={ctx}
        caption={o.title}
        rows={rows}
        columns={[
          { header: o.externalId, cell: (row) => <a href={`/dashboard/orders/${row.id}`}>{row.externalId}</a> },
          { header: o.payerName, cell: (row) => row.payerName },
          { header: t.common.amount, class: 'num', cell: (row) => yen(row.amount) },
          { header: t.common.status, cell: (row) => <Badge kind={row.status}>{o.statuses[row.status] ?? row.status}</Badge> },
          { header: o.orderedAt, cell: (row) => tokyoTime(row.orderedAt) },
          { header: o.expiresAt, cell: (row) => tokyoTime(row.expiresAt) },
        ]}
      />
      <Pager ctx={ctx} next={next === undefined ? undefined : { after: String(next) }} />
    </Layout>
  );
}

function ReversePage({ ctx, order, late, missingReason }: { ctx: ConsoleRequestContext; order: OrderRow; late: boolean; missingReason?: boolean }) {
  const { t } = ctx;
  const o = t.orders;
  return (
    <Layout ctx={ctx} title={o.reverseTitle} section="orders">
      <p>{o.reverseIntro}</p>
      {late ? <Notice kind="info">{o.reverseLate}</Notice> : null}
      {missingReason ? <Notice kind="error">{o.reverseReasonRequired}</Notice> : null}
      <Facts
        rows={[
          [o.externalId, order.externalId],
          [t.common.amount, yen(order.amount)],
          [o.payerName, order.payerName],
        ]}
      />
      <PostForm ctx={ctx} action={`/dashboard/orders/${order.id}/reverse`} class="stack panel">
        <label>
          {o.reverseReason}
          <textarea name="reason" maxLength={REVERSAL_REASON_MAX} required={late}></textarea>
        </label>
        <div class="actions">
          <button type="submit" class="danger">
            {o.reverseConfirm}
          </button>
          <a href={`/dashboard/orders/${order.id}`}>{t.common.cancel}</a>
        </div>
      </PostForm>
    </Layout>
  );
}

function EditPage({ ctx, order, problem }: { ctx: ConsoleRequestContext; order: OrderRow; problem?: string }) {
  const { t } = ctx;
  const o = t.orders;
  return (
    <Layout ctx={ctx} title={o.editTitle} section="orders">
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <PostForm ctx={ctx} action={`/dashboard/orders/${order.id}/edit`} class="stack panel">
        <label>
          {t.common.amount}
          <input name="amount" inputMode="numeric" required value={String(order.amount)} />
        </label>
        <label>
          {o.payerName}
          <input name="payer_name" required maxLength={LIMITS.payerNameMax} value={order.payerName} />
        </label>
        <label>
          {o.metadata}
          <textarea name="metadata" aria-describedby="metadata-help">
            {JSON.stringify(order.metadata)}
          </textarea>
        </label>
        <p id="metadata-help" class="muted">
          {o.metadataHelp}
        </p>
        <div class="actions">
          <button type="submit">{t.common.save}</button>
          <a href={`/dashboard/orders/${order.id}`}>{t.common.cancel}</a>
        </div>
      </PostForm>
    </Layout>
  );
}
