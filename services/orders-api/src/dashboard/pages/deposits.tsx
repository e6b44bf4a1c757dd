import { Decision, type Transaction } from '@pmatch/contracts';
import type { TransactionRow } from '@pmatch/db';
import { Router } from 'express';
import { findMatchableOrders, findOrdersByIds, searchDeposits } from '../../data/console-search';
import { recordAudit } from '../../use-cases/audit';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { excludeTransaction, matchTransaction, restoreTransaction } from '../../use-cases/match-transaction';
import { findVisibleTransaction } from '../../use-cases/read-transactions';
import { tokyoDateInput, tokyoTime, yen } from '../format';
import { auditContextOf, contextOf, field, pathId, queryText, requireRole, signedInOf, type ConsoleRequestContext } from '../http';
import { redirectDone, sendPage } from '../render';
import { Badge, Field, Layout, Pager, Table } from '../views/layout';
import { DepositDetail, reasonText } from './deposit-detail';

/** Held first: they wait for a person; then unmatched, confirmed, excluded. */
export const DEPOSIT_TABS = ['held', 'unmatched', 'confirmed', 'excluded'] as const;
const PAGE_SIZE = 50;

const amountFilter = (text: string | undefined) =>
  text !== undefined && /^\d{1,10}$/.test(text.replace(/[,¥\s]/g, '')) ? Number(text.replace(/[,¥\s]/g, '')) : undefined;
const cursorOf = (text: string | undefined) => (text !== undefined && /^\d{1,19}$/.test(text) ? BigInt(text) : undefined);

export function depositPages(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/deposits', async (req, res) => {
    const ctx = contextOf(req);
    const { actor } = signedInOf(req);
    const status = (DEPOSIT_TABS as readonly string[]).includes(req.query.status as string) ? (req.query.status as string) : 'held';
    const filters = {
      name: queryText(req, 'name'),
      amount: amountFilter(queryText(req, 'amount')),
      from: tokyoDateInput(queryText(req, 'from')),
      to: tokyoDateInput(queryText(req, 'to')),
    };
    const to = filters.to === undefined ? undefined : new Date(filters.to.getTime() + 24 * 60 * 60 * 1000);
    const page = await searchDeposits(deps.database.prisma, actor, {
      status,
      limit: PAGE_SIZE,
      ...(filters.name === undefined ? {} : { name: filters.name }),
      ...(filters.amount === undefined ? {} : { amount: filters.amount }),
      ...(filters.from === undefined ? {} : { from: filters.from }),
      ...(to === undefined ? {} : { to }),
      ...(cursorOf(queryText(req, 'after')) === undefined ? {} : { before: cursorOf(queryText(req, 'after'))! }),
    });
    sendPage(res, <DepositList ctx={ctx} status={status} rows={page.rows} next={page.nextBefore} req={req.query as Record<string, string>} />);
  });

  router.get('/dashboard/deposits/:id', async (req, res) => {
    const ctx = contextOf(req);
    const { actor } = signedInOf(req);
    const deposit = await findVisibleTransaction(deps, actor, pathId(req));
    const decision = Decision.safeParse(deposit.decision);
    const explained = decision.success ? decision.data : { reason: '', candidates: [] };
    const orders = await findOrdersByIds(deps.database.prisma, actor, [
      ...new Set([...explained.candidates.map((c) => c.order_id), ...(deposit.orderId ? [deposit.orderId] : [])]),
    ]);
    const search = queryText(req, 'order_search');
    const searching = req.query.find === '1' || search !== undefined;
    const matchable =
      searching && (deposit.status === 'held' || deposit.status === 'unmatched')
        ? await findMatchableOrders(deps.database.prisma, actor, deposit, search, 20)
        : undefined;
    sendPage(res, <DepositDetail ctx={ctx} deposit={deposit} decision={explained} orders={orders} matchable={matchable} search={search} />);
  });

  router.post('/dashboard/deposits/:id/match', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const deposit = await findVisibleTransaction(deps, actor, pathId(req));
    const orderId = field(req, 'order_id') ?? '';
    const done = await matchTransaction(deps, actor, deposit, { order_id: orderId });
    await recordAudit(deps, auditContextOf(req), 'transaction.match', deposit.id, { order_id: orderId, status: done.status });
    redirectDone(res, `/dashboard/deposits/${deposit.id}`, 'confirmed');
  });

  for (const [action, act, done] of [
    ['exclude', excludeTransaction, 'excluded'],
    ['restore', restoreTransaction, 'restored'],
  ] as const) {
    router.post(`/dashboard/deposits/:id/${action}`, requireRole('operator'), async (req, res) => {
      const { actor } = signedInOf(req);
      const deposit = await findVisibleTransaction(deps, actor, pathId(req));
      const result: Transaction = await act(deps, actor, deposit);
      await recordAudit(deps, auditContextOf(req), `transaction.${action}`, deposit.id, { status: result.status });
      redirectDone(res, `/dashboard/deposits/${deposit.id}`, done);
    });
  }

  return router;
}

function DepositList({
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
