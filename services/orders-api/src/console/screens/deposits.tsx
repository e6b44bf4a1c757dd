import type { TransactionRow } from '@pmatch/db';
import { Badge, Field, Layout, Notice, Pager, PostForm, Table } from '../components/layout';
import type { ClearHeldDeposit } from '../../use-cases/console-reads';
import { tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';
import { daysBetween, reasonText } from './deposit-detail';

/** Held first: they wait for a person; then unmatched, confirmed, excluded. */
export const DEPOSIT_TABS = ['held', 'unmatched', 'confirmed', 'excluded'] as const;

/** Deposits of one status, newest first, with the search form and tabs. */
export function DepositListScreen({
  ctx,
  status,
  rows,
  next,
  req,
  counts,
  countCap,
  now,
}: {
  ctx: ConsoleRequestContext;
  status: string;
  rows: TransactionRow[];
  next: bigint | undefined;
  req: Record<string, string>;
  counts: Record<string, number>;
  countCap: number;
  now: Date;
}) {
  const { t } = ctx;
  const d = t.deposits;
  return (
    <Layout ctx={ctx} title={d.title} section="deposits">
      {new URLSearchParams(ctx.query).get('done') === 'confirmed' ? <Notice kind="success">{d.confirmedNoneLeft}</Notice> : null}
      {new URLSearchParams(ctx.query).get('done') === 'bulk' ? (
        <Notice kind="success">
          {d.bulkDone(Number(new URLSearchParams(ctx.query).get('confirmed') ?? 0), Number(new URLSearchParams(ctx.query).get('left') ?? 0))}
        </Notice>
      ) : null}
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
          { header: d.waiting, cell: (row) => d.age(daysBetween(row.occurredAt, now)) },
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
