import type { Decision } from '@pmatch/contracts';
import type { OrderRow, TransactionRow } from '@pmatch/db';
import { tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';
import { ActionButton, Badge, Facts, Field, Layout, Notice, Table, type Column } from '../components/layout';

/** A decision's or candidate's reason code in the console's language (the code itself if it has no text). */
export function reasonText(ctx: ConsoleRequestContext, reason: string | null | undefined): string {
  if (reason === undefined || reason === null || reason === '') return '';
  return ctx.t.reasons[reason] ?? ctx.t.fits[reason] ?? reason;
}

const DONE_KEYS = { confirmed: 'confirmed', excluded: 'excluded', restored: 'restored' } as const;

/** One deposit: its facts, its decision and candidates, and what a person may do about it. */
export function DepositScreen({
  ctx,
  deposit,
  decision,
  orders,
  matchable,
  search,
}: {
  ctx: ConsoleRequestContext;
  deposit: TransactionRow;
  decision: Decision;
  orders: OrderRow[];
  matchable: OrderRow[] | undefined;
  search: string | undefined;
}) {
  const { t } = ctx;
  const d = t.deposits;
  const mayDecide = ctx.signedIn!.actor.role !== 'viewer';
  const orderById = new Map(orders.map((o) => [o.id, o]));
  const doneKey =
    DONE_KEYS[ctx.query.includes('done=') ? (new URLSearchParams(ctx.query).get('done') as keyof typeof DONE_KEYS) : ('' as keyof typeof DONE_KEYS)];
  const decidable = deposit.status === 'held' || deposit.status === 'unmatched';
  return (
    <Layout ctx={ctx} title={d.detailTitle(deposit.counterparty)} section="deposits">
      {doneKey ? <Notice kind="success">{d[doneKey]}</Notice> : null}
      <section aria-labelledby="facts">
        <h2 id="facts">{d.facts}</h2>
        <Facts
          rows={[
            [t.common.id, <code>{deposit.id}</code>],
            [t.common.status, <Badge kind={deposit.status}>{d.statuses[deposit.status] ?? deposit.status}</Badge>],
            [t.common.amount, yen(deposit.amount)],
            [d.counterparty, deposit.counterparty],
            [d.occurredAt, tokyoTime(deposit.occurredAt)],
            ...(deposit.orderId
              ? [[d.linkedOrder, <a href={`/dashboard/orders/${deposit.orderId}`}>{deposit.orderId}</a>] as [string, preact.ComponentChildren]]
              : []),
          ]}
        />
      </section>
      <section aria-labelledby="decision">
        <h2 id="decision">{d.decision}</h2>
        <p>
          {d.decisionReason}: <strong>{reasonText(ctx, decision.reason)}</strong>
        </p>
        <Table
          ctx={ctx}
          caption={d.candidates}
          rows={decision.candidates}
          empty={decision.reason === 'no_order_with_amount' ? d.noCandidates : t.common.none}
          columns={[...candidateColumns(ctx, orderById), mayDecide && decidable && confirmColumn(ctx, deposit, orderById)]}
        />
      </section>
      {mayDecide && decidable ? <MatchOtherSection ctx={ctx} deposit={deposit} matchable={matchable} search={search} /> : null}
      {mayDecide && (decidable || deposit.status === 'excluded') ? (
        <div class="actions panel">
          {decidable ? (
            <ActionButton ctx={ctx} action={`/dashboard/deposits/${deposit.id}/exclude`} kind="danger" label={d.exclude} />
          ) : (
            <ActionButton ctx={ctx} action={`/dashboard/deposits/${deposit.id}/restore`} kind="secondary" label={d.restore} />
          )}
        </div>
      ) : null}
    </Layout>
  );
}

type Candidate = Decision['candidates'][number];

/** What the console shows of each candidate: its order, the fit and rules, and why it was not chosen. */
function candidateColumns(ctx: ConsoleRequestContext, orderById: Map<string, OrderRow>): Column<Candidate>[] {
  const { t } = ctx;
  const d = t.deposits;
  return [
    {
      header: d.candidateOrder,
      cell: (c) => (
        <>
          <a href={`/dashboard/orders/${c.order_id}`}>{orderById.get(c.order_id)?.externalId ?? c.order_id}</a>
          <br />
          <code class="muted">{c.order_id}</code>
        </>
      ),
    },
    { header: d.payerName, cell: (c) => orderById.get(c.order_id)?.payerName ?? '' },
    {
      header: t.common.status,
      cell: (c) => {
        const order = orderById.get(c.order_id);
        return order ? <Badge kind={order.status}>{t.orders.statuses[order.status] ?? order.status}</Badge> : null;
      },
    },
    {
      header: d.fit,
      cell: (c) => (
        <>
          {c.fit === null ? t.fits.none : (t.fits[c.fit] ?? c.fit)}
          {c.would_fit ? (
            <>
              <br />
              <span class="muted">
                {d.wouldFit}: {t.fits[c.would_fit] ?? c.would_fit}
              </span>
            </>
          ) : null}
        </>
      ),
    },
    { header: d.rules, cell: (c) => (c.fit_rules ?? []).map((r) => t.settings.ruleNames[r] ?? r).join(', ') },
    { header: d.whyNot, cell: (c) => reasonText(ctx, c.not_chosen_because ?? c.excluded_because ?? null) },
  ];
}

/** Confirm for a candidate whose order is open or expired and was not ordered after the deposit. */
function confirmColumn(ctx: ConsoleRequestContext, deposit: TransactionRow, orderById: Map<string, OrderRow>): Column<Candidate> {
  const { t } = ctx;
  const d = t.deposits;
  return {
    header: t.common.actions,
    cell: (c) => {
      const order = orderById.get(c.order_id);
      const confirmable = order !== undefined && (order.status === 'open' || order.status === 'expired') && c.excluded_because !== 'ordered_after_deposit';
      return confirmable ? (
        <ActionButton
          ctx={ctx}
          action={`/dashboard/deposits/${deposit.id}/match`}
          hidden={{ order_id: c.order_id }}
          label={d.confirm}
          ariaLabel={d.confirmFor(order.externalId)}
        />
      ) : null;
    },
  };
}

/** A search for an order outside the candidates, and a button to match the deposit to each found. */
function MatchOtherSection({
  ctx,
  deposit,
  matchable,
  search,
}: {
  ctx: ConsoleRequestContext;
  deposit: TransactionRow;
  matchable: OrderRow[] | undefined;
  search: string | undefined;
}) {
  const { t } = ctx;
  const d = t.deposits;
  return (
    <section aria-labelledby="match-other">
      <h2 id="match-other">{d.matchOther}</h2>
      <p>{d.matchOtherIntro}</p>
      <form method="get" action={`/dashboard/deposits/${deposit.id}`} class="form-grid" role="search">
        <input type="hidden" name="find" value="1" />
        <Field label={d.matchSearch} name="order_search" value={search} />
        <button type="submit" class="secondary">
          {t.common.search}
        </button>
      </form>
      {matchable === undefined ? null : (
        <Table
          ctx={ctx}
          caption={d.matchOther}
          rows={matchable}
          columns={[
            { header: t.orders.externalId, cell: (order) => <a href={`/dashboard/orders/${order.id}`}>{order.externalId}</a> },
            { header: t.orders.payerName, cell: (order) => order.payerName },
            { header: t.orders.orderedAt, cell: (order) => tokyoTime(order.orderedAt) },
            { header: t.common.status, cell: (order) => <Badge kind={order.status}>{t.orders.statuses[order.status] ?? order.status}</Badge> },
            {
              header: t.common.actions,
              cell: (order) => (
                <ActionButton
                  ctx={ctx}
                  action={`/dashboard/deposits/${deposit.id}/match`}
                  hidden={{ order_id: order.id }}
                  label={d.matchTo}
                  ariaLabel={`${d.matchTo}: ${order.externalId}`}
                />
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
