import type { TransactionRow } from '@pmatch/db';
import { Badge, Field, Layout, Notice, Pager, Table } from '../components/layout';
import { tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';
import { reasonText } from './deposit-detail';

/** Held first: they wait for a person; then unmatched, confirmed, excluded. */
export const DEPOSIT_TABS = ['held', 'unmatched', 'confirmed', 'excluded'] as const;

/** Deposits of one status, newest first, with the search form and tabs. */
export function DepositListScreen({
  ctx,
  status,
  rows,
  next,
  req,
}: {
  ctx: ConsoleRequestContext;
  status: string;
  rows: TransactionRow[];
  next: bigint | undefined;
  req: Record<string, string>;
}) {
  const { t } = ctx;
  const d = t.deposits;
  return (
    <Layout ctx={ctx} title={d.title} section="deposits">
      {new URLSearchParams(ctx.query).get('done') === 'confirmed' ? <Notice kind="success">{d.confirmedNoneLeft}</Notice> : null}
      <p>
        <a href="/dashboard/payer-aliases">{t.payerAliases.link}</a>
      </p>
      <nav aria-label={d.statusTabs}>
        <ul class="tabs">
          {DEPOSIT_TABS.map((tab) => (
            <li>
              <a href={`/dashboard/deposits?status=${tab}`} aria-current={tab === status ? 'page' : undefined}>
                {d.statuses[tab]}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <form method="get" action="/dashboard/deposits" class="form-grid panel" role="search">
        <input type="hidden" name="status" value={status} />
        <Field label={d.searchName} name="name" value={req.name} />
        <Field label={d.searchAmount} name="amount" inputMode="numeric" value={req.amount} />
        <Field label={t.common.from} name="from" type="date" value={req.from} />
        <Field label={t.common.to} name="to" type="date" value={req.to} />
        <button type="submit">{t.common.search}</button>
        <a href={`/dashboard/deposits?status=${status}`}>{t.common.clear}</a>
      </form>
      <Table
        ctx={ctx}
        caption={d.statuses[status]}
        rows={rows}
        columns={[
          { header: d.occurredAt, cell: (row) => tokyoTime(row.occurredAt) },
          { header: d.counterparty, cell: (row) => <a href={`/dashboard/deposits/${row.id}`}>{row.counterparty}</a> },
          { header: t.common.amount, class: 'num', cell: (row) => yen(row.amount) },
          { header: t.common.status, cell: (row) => <Badge kind={row.status}>{d.statuses[row.status] ?? row.status}</Badge> },
          { header: d.decisionReason, cell: (row) => reasonText(ctx, (row.decision as { reason?: string } | null)?.reason) },
        ]}
      />
      <Pager ctx={ctx} next={next === undefined ? undefined : { after: String(next) }} />
    </Layout>
  );
}
