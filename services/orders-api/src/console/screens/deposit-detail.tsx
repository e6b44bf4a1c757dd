import type { Decision } from '@pmatch/contracts';
import type { OrderRow, TransactionRow } from '@pmatch/db';
import { daysBetween, tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';
import type { ReversedPayment, ShownExplanation } from '../../use-cases/console-reads';
import { DedicatedAccountOrder, DepositFacts, DuplicateOf } from '../components/deposit-context';
import { HeldNavigation } from '../components/held-navigation';
import { ActionButton, Badge, Field, Layout, Notice, Table, type Column } from '../components/layout';
import { ConfirmForm, DecisionNow, ReversedPayments, reasonText } from './deposit-explanation';

export { reasonText };

const DONE_KEYS = { confirmed: 'confirmed', excluded: 'excluded', restored: 'restored' } as const;

/**
 * One deposit: its facts, its decision (decided again now when it is held or unmatched, the stored
 * reason beside it) and candidates, a payment of it that was reversed, and what a person may do.
 */
export function DepositScreen({
  ctx,
  deposit,
  decision,
  stored,
  explanation,
  reversals,
  orders,
  matchable,
  duplicateOf,
  search,
  neighbours,
  now,
}: {
  ctx: ConsoleRequestContext;
  deposit: TransactionRow;
  decision: Decision;
  stored: Decision;
  explanation: ShownExplanation;
  reversals: ReversedPayment[];
  orders: OrderRow[];
  matchable: OrderRow[] | undefined;
  duplicateOf?: TransactionRow | undefined;
  search: string | undefined;
  neighbours: { previous: string | undefined; next: string | undefined };
  now: Date;
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
      <DepositFacts ctx={ctx} deposit={deposit} orderById={orderById} />
      {reversals.length > 0 ? (
        <ReversedPayments
          ctx={ctx}
          deposit={deposit}
          reversals={reversals}
          confirmable={mayDecide && decidable}
          candidateIds={new Set(decision.candidates.map((c) => c.order_id))}
        />
      ) : null}
      <section aria-labelledby="decision">
        <h2 id="decision">{d.decision}</h2>
        <DecisionNow ctx={ctx} explanation={explanation} decision={decision} stored={stored} orderById={orderById} />
        <Table
          ctx={ctx}
          caption={d.candidates}
          rows={fittingFirst(decision.candidates)}
          empty={decision.reason === 'no_order_with_amount' ? d.noCandidates : t.common.none}
          columns={[
            ...candidateColumns(ctx, orderById, now),
            mayDecide && decidable && confirmColumn(ctx, deposit, orderById, decision.candidates, wouldConfirm(explanation)),
          ]}
        />
        <NearMisses ctx={ctx} decision={decision} orderById={orderById} />
        {duplicateOf ? <DuplicateOf ctx={ctx} earlier={duplicateOf} deposit={deposit} /> : null}
        <DedicatedAccountOrder ctx={ctx} decision={decision} orderById={orderById} />
      </section>
      {deposit.status === 'held' || neighbours.previous !== undefined || neighbours.next !== undefined ? (
        <HeldNavigation ctx={ctx} neighbours={neighbours} shortcuts={mayDecide && decidable} />
      ) : null}
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

/** A candidate whose name fits and that nothing rules out: the ones a person most likely picks. */
function fits(c: Candidate): boolean {
  return c.fit !== null && c.excluded_because == null;
}

/** The order deciding the deposit again now would confirm it for; undefined when it would not, or the matcher did not say. */
function wouldConfirm(explanation: ShownExplanation): string | undefined {
  return explanation.kind === 'current' && explanation.outcome === 'confirmed' ? (explanation.orderId ?? undefined) : undefined;
}

/** Fitting candidates first, the others after them, each group in the matcher's order. */
function fittingFirst(candidates: Candidate[]): Candidate[] {
  return [...candidates.filter(fits), ...candidates.filter((c) => !fits(c))];
}

/** What the console shows of each candidate: its order, when and what, the fit and rules, and why it was not chosen. */
function candidateColumns(ctx: ConsoleRequestContext, orderById: Map<string, OrderRow>, now: Date): Column<Candidate>[] {
  const { t } = ctx;
  const d = t.deposits;
  const order = (c: Candidate) => orderById.get(c.order_id);
  return [
    {
      header: d.candidateOrder,
      cell: (c) => (
        <>
          <a href={`/dashboard/orders/${c.order_id}`}>{order(c)?.externalId ?? c.order_id}</a>
          <br />
          {order(c)?.payerName ?? ''}
          {fits(c) ? null : (
            <>
              <br />
              <span class="muted">{d.otherCandidate}</span>
            </>
          )}
        </>
      ),
    },
    { header: t.orders.orderedAt, cell: (c) => (order(c) ? tokyoTime(order(c)!.orderedAt) : '') },
    { header: d.item, cell: (c) => itemOf(order(c)) },
    {
      header: d.expiresAndAge,
      cell: (c) => {
        const o = order(c);
        if (o === undefined) return null;
        return (
          <>
            {tokyoTime(o.expiresAt)}
            <br />
            <Badge kind={o.status}>{t.orders.statuses[o.status] ?? o.status}</Badge> {d.age(daysBetween(o.orderedAt, now))}
          </>
        );
      },
    },
    {
      header: d.fit,
      cell: (c) => (
        <>
          {c.fit === null ? t.fits.none : (t.fits[c.fit] ?? c.fit)}
          {c.fit_rules && c.fit_rules.length > 0 ? (
            <>
              <br />
              <span class="muted">
                {d.rules}: {c.fit_rules.map((r) => t.settings.ruleNames[r] ?? r).join(', ')}
              </span>
            </>
          ) : null}
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
    { header: d.whyNot, cell: (c) => reasonText(ctx, c.not_chosen_because ?? c.excluded_because ?? null) },
  ];
}

/** The order's item, and the description its metadata gives if any. */
function itemOf(order: OrderRow | undefined): string {
  if (order === undefined) return '';
  const metadata = (order.metadata ?? {}) as Record<string, unknown>;
  const description = typeof metadata.description === 'string' ? metadata.description : undefined;
  return description === undefined || description === order.itemName ? order.itemName : `${order.itemName}（${description}）`;
}

/**
 * Confirm for a candidate whose order is open or expired and was not ordered after the deposit:
 * "confirm and next" (to the next held deposit, oldest first) and "confirm" (stay). Fitting
 * candidates' buttons are primary, the others' secondary. Where the names differ, a checkbox
 * remembers the depositor as a payer of the order's name (rule `learned_payer`). The order the
 * matcher would confirm now (`clear`), if any, is the one `c` confirms without a choice.
 */
function confirmColumn(
  ctx: ConsoleRequestContext,
  deposit: TransactionRow,
  orderById: Map<string, OrderRow>,
  all: Candidate[],
  clear: string | undefined,
): Column<Candidate> {
  const { t } = ctx;
  const keyOf = new Map(fittingFirst(all).map((c, i) => [c.order_id, i + 1]));
  return {
    header: t.common.actions,
    cell: (c) => {
      const order = orderById.get(c.order_id);
      const confirmable = order !== undefined && (order.status === 'open' || order.status === 'expired') && c.excluded_because !== 'ordered_after_deposit';
      if (!confirmable) return null;
      const form = { nameFits: fits(c), exact: c.fit === 'exact', shortcut: keyOf.get(c.order_id)!, withoutChoice: c.order_id === clear };
      return <ConfirmForm ctx={ctx} deposit={deposit} order={order} {...form} />;
    },
  };
}

/** Orders whose name fits but whose amount differs a little: never confirmed, shown so a person can decide. */
function NearMisses({ ctx, decision, orderById }: { ctx: ConsoleRequestContext; decision: Decision; orderById: Map<string, OrderRow> }) {
  const d = ctx.t.deposits;
  const misses = decision.near_misses ?? [];
  if (misses.length === 0) return null;
  return (
    <Table
      ctx={ctx}
      caption={d.nearMisses}
      rows={misses}
      columns={[
        {
          header: d.candidateOrder,
          cell: (m) => (
            <>
              <a href={`/dashboard/orders/${m.order_id}`}>{orderById.get(m.order_id)?.externalId ?? m.order_id}</a>
              <br />
              {orderById.get(m.order_id)?.payerName ?? ''}
            </>
          ),
        },
        { header: d.amountDifference, cell: (m) => d.difference(yen(Math.abs(m.amount_difference)), m.amount_difference < 0), class: 'num' },
        { header: d.likely, cell: (m) => d.nearMissKinds[m.likely] ?? m.likely },
      ]}
    />
  );
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
