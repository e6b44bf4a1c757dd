import { LIMITS, ORDER_STATUSES, REVERSAL_REASON_MAX } from '@pmatch/contracts';
import type { OrderRow } from '@pmatch/db';
import { Badge, Facts, Field, Layout, Notice, Pager, PostForm, Table } from '../components/layout';
import { tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';

/** Orders under the filters, newest or oldest first. */
export function OrderListScreen({
  ctx,
  rows,
  next,
  q,
  sort,
}: {
  ctx: ConsoleRequestContext;
  rows: OrderRow[];
  next: bigint | undefined;
  q: Record<string, string>;
  sort: 'oldest' | 'newest';
}) {
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
        <label>
          {o.sortOrder}
          <select name="sort">
            {(['newest', 'oldest'] as const).map((option) => (
              <option value={option} selected={sort === option}>
                {o.sortOrders[option]}
              </option>
            ))}
          </select>
        </label>
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

/** Reversing a payment: a confirmation that asks for the reason (required after 24 hours). */
export function ReverseScreen({ ctx, order, late, missingReason }: { ctx: ConsoleRequestContext; order: OrderRow; late: boolean; missingReason?: boolean }) {
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

/** Editing an open order's amount, payer name and metadata. */
export function EditOrderScreen({
  ctx,
  order,
  problem,
  entered,
}: {
  ctx: ConsoleRequestContext;
  order: OrderRow;
  problem?: string;
  /** What a refused edit had entered, shown again as it was. */
  entered?: { amount: string; payer_name: string; metadata: string };
}) {
  const { t } = ctx;
  const o = t.orders;
  return (
    <Layout ctx={ctx} title={o.editTitle} section="orders">
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <PostForm ctx={ctx} action={`/dashboard/orders/${order.id}/edit`} class="stack panel">
        <label>
          {t.common.amount}
          <input name="amount" inputMode="numeric" required value={entered?.amount ?? String(order.amount)} />
        </label>
        <label>
          {o.payerName}
          <input name="payer_name" required maxLength={LIMITS.payerNameMax} value={entered?.payer_name ?? order.payerName} />
        </label>
        <label>
          {o.metadata}
          <textarea name="metadata" aria-describedby="metadata-help">
            {entered?.metadata ?? JSON.stringify(order.metadata)}
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
