import type { OrderRow, TransactionRow } from '@pmatch/db';
import { nearMissesOf } from '../../use-cases/console-lists';
import { Badge, Field, Layout, Notice, Pager, PostForm, Table } from '../components/layout';
import type { ClearHeldDeposit } from '../../use-cases/confirm-together';
import { daysBetween, tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';
import { reasonText } from './deposit-detail';

/** Held first: they wait for a person; then unmatched, confirmed, excluded. */
export const DEPOSIT_TABS = ['held', 'unmatched', 'confirmed', 'excluded'] as const;
export type DepositTab = (typeof DEPOSIT_TABS)[number];

/** A list's order: oldest or newest first. */
export type ListSort = 'oldest' | 'newest';

/** Held and unmatched deposits are a queue worked from the oldest; the others are looked up, newest first. */
export function defaultSortOf(tab: DepositTab): ListSort {
  return tab === 'held' || tab === 'unmatched' ? 'oldest' : 'newest';
}

/**
 * What the held tab can be narrowed to: each reason a held decision gives (packages/contracts
 * `Decision.reason`), and `near_miss`, a decision listing an order whose amount differs a little.
 */
export const HELD_REASON_FILTERS = [
  'several_orders_fit',
  'no_name_fits',
  'near_miss',
  'expired_order_fits',
  'only_expired_orders_fit',
  'possible_duplicate',
  'late_order',
  'several_deposits_fit_late_order',
  'too_many_candidates',
  'transfer_code_amount_differs',
  'transfer_code_order_not_open',
  'transfer_code_name_differs',
  'dedicated_account_order_closed',
  'dedicated_account_amount_differs',
  'bank_reversal',
] as const;

/** Deposits of one status, oldest or newest first, with the search form, tabs and CSV downloads. */
export function DepositListScreen({
  ctx,
  status,
  sort,
  rows,
  next,
  nearMissOrders,
  req,
  counts,
  countCap,
  now,
}: {
  ctx: ConsoleRequestContext;
  status: DepositTab;
  sort: ListSort;
  rows: TransactionRow[];
  next: bigint | undefined;
  nearMissOrders: Map<string, OrderRow>;
  req: Record<string, string>;
  counts: Record<string, number>;
  countCap: number;
  now: Date;
}) {
  const { t } = ctx;
  const d = t.deposits;
  const query = new URLSearchParams(ctx.query);
  const waiting = status === 'held' || status === 'unmatched';
  return (
    <Layout ctx={ctx} title={d.title} section="deposits">
      {query.get('done') === 'confirmed' ? <Notice kind="success">{d.confirmedNoneLeft}</Notice> : null}
      {query.get('done') === 'bulk' ? <Notice kind="success">{d.bulkDone(Number(query.get('confirmed') ?? 0), Number(query.get('left') ?? 0))}</Notice> : null}
      <p class="actions">
        {status === 'held' && ctx.signedIn!.actor.role !== 'viewer' ? <a href="/dashboard/deposits/bulk-confirm">{d.bulkLink}</a> : null}
        <a href="/dashboard/payer-aliases">{t.payerAliases.link}</a>
      </p>
      <nav aria-label={d.statusTabs}>
        <ul class="tabs">
          {DEPOSIT_TABS.map((tab) => (
            <li>
              <a href={`/dashboard/deposits?status=${tab}`} aria-current={tab === status ? 'page' : undefined}>
                {d.statuses[tab]} ({(counts[tab] ?? 0) >= countCap ? `${countCap}+` : (counts[tab] ?? 0)})
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <DepositSearchForm ctx={ctx} status={status} sort={sort} req={req} />
      <Table
        ctx={ctx}
        caption={d.statuses[status]}
        rows={rows}
        columns={[
          { header: d.occurredAt, cell: (row) => tokyoTime(row.occurredAt) },
          { header: d.waiting, cell: (row) => d.age(daysBetween(row.occurredAt, now)) },
          { header: d.counterparty, cell: (row) => <a href={`/dashboard/deposits/${row.id}`}>{row.counterparty}</a> },
          { header: t.common.amount, class: 'num', cell: (row) => yen(row.amount) },
          { header: t.common.status, cell: (row) => <Badge kind={row.status}>{d.statuses[row.status] ?? row.status}</Badge> },
          { header: d.decisionReason, cell: (row) => reasonText(ctx, (row.decision as { reason?: string } | null)?.reason) },
          waiting && { header: d.nearMissColumn, cell: (row) => <NearMissesInRow ctx={ctx} deposit={row} orders={nearMissOrders} /> },
        ]}
      />
      <Pager ctx={ctx} next={next === undefined ? undefined : { after: String(next) }} />
      <Downloads ctx={ctx} status={status} />
    </Layout>
  );
}

/** The list's search: name, amount, dates, the held tab's reason, and the order. */
function DepositSearchForm({ ctx, status, sort, req }: { ctx: ConsoleRequestContext; status: DepositTab; sort: ListSort; req: Record<string, string> }) {
  const { t } = ctx;
  const d = t.deposits;
  return (
    <form method="get" action="/dashboard/deposits" class="form-grid panel" role="search">
      <input type="hidden" name="status" value={status} />
      <Field label={d.searchName} name="name" value={req.name} />
      <Field label={d.searchAmount} name="amount" inputMode="numeric" value={req.amount} />
      <Field label={t.common.from} name="from" type="date" value={req.from} />
      <Field label={t.common.to} name="to" type="date" value={req.to} />
      {status === 'held' ? (
        <label>
          {d.reasonFilter}
          <select name="reason">
            <option value="">{d.allReasons}</option>
            {HELD_REASON_FILTERS.map((reason) => (
              <option value={reason} selected={req.reason === reason}>
                {d.heldReasons[reason]}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label>
        {d.sortOrder}
        <select name="sort">
          {(['oldest', 'newest'] as const).map((option) => (
            <option value={option} selected={sort === option}>
              {d.sortOrders[option]}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">{t.common.search}</button>
      <a href={`/dashboard/deposits?status=${status}`}>{t.common.clear}</a>
    </form>
  );
}

/** Links to the list's CSV files, under its filters. */
function Downloads({ ctx, status }: { ctx: ConsoleRequestContext; status: DepositTab }) {
  const d = ctx.t.deposits;
  const query = new URLSearchParams(ctx.query);
  // The downloads take the list's filters (not its order or page: a file is always oldest first, whole).
  const filters = new URLSearchParams([...query].filter(([key]) => ['name', 'amount', 'from', 'to', 'reason'].includes(key)));
  filters.set('status', status);
  return (
    <section class="panel" aria-labelledby="downloads">
      <h2 id="downloads">{d.downloads}</h2>
      <ul>
        <li>
          <a href={`/dashboard/deposits.csv?${filters}`} download>
            {d.downloadDeposits(d.statuses[status])}
          </a>
        </li>
        <li>
          <a href={`/dashboard/payments.csv?${filters}`} download>
            {d.downloadPayments}
          </a>
        </li>
      </ul>
    </section>
  );
}

/** A deposit's near misses in its list row, each linking to the deposit's page where it is settled. */
function NearMissesInRow({ ctx, deposit, orders }: { ctx: ConsoleRequestContext; deposit: TransactionRow; orders: Map<string, OrderRow> }) {
  const d = ctx.t.deposits;
  const misses = nearMissesOf(deposit);
  if (misses.length === 0) return null;
  return (
    <ul>
      {misses.map((m) => (
        <li>
          <a href={`/dashboard/deposits/${deposit.id}`}>
            {d.nearMissInRow(
              orders.get(m.order_id)?.externalId ?? m.order_id,
              yen(Math.abs(m.amount_difference)),
              m.amount_difference < 0,
              d.nearMissShort[m.likely] ?? m.likely,
            )}
          </a>
        </li>
      ))}
    </ul>
  );
}

/** What a bulk confirmation would do, asked first: each held deposit and its one fitting order. */
export function BulkConfirmScreen({ ctx, pairs }: { ctx: ConsoleRequestContext; pairs: ClearHeldDeposit[] }) {
  const { t } = ctx;
  const d = t.deposits;
  return (
    <Layout ctx={ctx} title={d.bulkTitle} section="deposits">
      <p>{d.bulkIntro}</p>
      <Table
        ctx={ctx}
        caption={d.bulkTitle}
        rows={pairs}
        empty={d.bulkNone}
        columns={[
          { header: d.counterparty, cell: (p) => <a href={`/dashboard/deposits/${p.deposit.id}`}>{p.deposit.counterparty}</a> },
          { header: t.common.amount, cell: (p) => yen(p.deposit.amount), class: 'num' },
          { header: d.occurredAt, cell: (p) => tokyoTime(p.deposit.occurredAt) },
          {
            header: d.candidateOrder,
            cell: (p) => (
              <>
                <a href={`/dashboard/orders/${p.order.id}`}>{p.order.externalId}</a>
                <br />
                {p.order.payerName}
              </>
            ),
          },
        ]}
      />
      {pairs.length === 0 ? null : (
        <PostForm ctx={ctx} action="/dashboard/deposits/bulk-confirm" class="actions">
          {pairs.map((p) => (
            <input type="hidden" name="pair" value={`${p.deposit.id}:${p.order.id}`} />
          ))}
          <button type="submit">{d.bulkButton(pairs.length)}</button>
          <a href="/dashboard/deposits">{t.common.cancel}</a>
        </PostForm>
      )}
    </Layout>
  );
}
