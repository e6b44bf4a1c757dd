import { Payment } from '@pmatch/contracts';
import { pastReversalWindow } from '../../domain/orders';
import type { EventRow, OrderRow, TransactionRow } from '@pmatch/db';
import type { PaymentReversal } from '../../use-cases/console-reads';
import { tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';
import { deciderWords, eventTypeWords, triggerWords } from '../words';
import { ActionButton, Badge, Facts, Layout, Notice, Table } from '../components/layout';
import { TransferToSection } from '../components/transfer-to';
import { reasonText } from './deposit-detail';

const DONE = ['reversed', 'canceled', 'markedPaid', 'edited'] as const;

/**
 * One order: its facts, its payment and the payments of it that were reversed, the deposits that
 * could pay it, what a person may do with it, and its timeline of events.
 */
export function OrderScreen({
  ctx,
  order,
  timeline,
  reversals,
  couldPay,
  now,
  people,
}: {
  ctx: ConsoleRequestContext;
  order: OrderRow;
  timeline: EventRow[];
  reversals: PaymentReversal[];
  couldPay: TransactionRow[];
  now: Date;
  /** The organisation's people by id (their e-mails), to name who decided. */
  people: ReadonlyMap<string, string>;
}) {
  const { t } = ctx;
  const o = t.orders;
  const payment = Payment.safeParse(order.payment);
  const done = DONE.find((d) => new URLSearchParams(ctx.query).get('done') === d);
  const mayDecide = ctx.signedIn!.actor.role !== 'viewer';
  const fromShop = order.source === 'shop';
  return (
    <Layout ctx={ctx} title={o.detailTitle(order.externalId)} section="orders">
      {done ? <Notice kind="success">{o[done]}</Notice> : null}
      <section aria-labelledby="order-facts">
        <h2 id="order-facts">{o.title}</h2>
        <Facts
          rows={[
            [t.common.status, <Badge kind={order.status}>{o.statuses[order.status] ?? order.status}</Badge>],
            [t.common.amount, yen(order.amount)],
            [o.payerName, order.payerName],
            [o.itemName, order.itemName],
            [o.externalId, order.externalId],
            [o.orderedAt, tokyoTime(order.orderedAt)],
            [o.expiresAt, tokyoTime(order.expiresAt)],
            [o.closedAt, order.closedAt ? tokyoTime(order.closedAt) : ''],
            [o.source, fromShop ? o.shop : order.source === 'payment_link' ? `${o.paymentLink} (${order.paymentLinkId ?? ''})` : 'API'],
            [o.metadata, <code>{JSON.stringify(order.metadata)}</code>],
          ]}
        />
      </section>
      <TransferToSection ctx={ctx} order={order} />
      <PaymentSection ctx={ctx} payment={payment.success ? payment.data : undefined} people={people} />
      {reversals.length > 0 ? <ReversedPayments ctx={ctx} reversals={reversals} people={people} /> : null}
      {order.status === 'open' || order.status === 'expired' ? <DepositsThatCouldPay ctx={ctx} order={order} deposits={couldPay} /> : null}
      {mayDecide && !fromShop ? (
        <div class="actions panel">
          {order.status === 'paid' ? <a href={`/dashboard/orders/${order.id}/reverse`}>{o.reverse}</a> : null}
          {order.status === 'open' ? (
            <>
              <a href={`/dashboard/orders/${order.id}/edit`}>{o.edit}</a>
              <ActionButton ctx={ctx} action={`/dashboard/orders/${order.id}/mark-paid`} kind="secondary" label={o.markPaid} />
            </>
          ) : null}
          {order.status === 'open' || order.status === 'expired' ? (
            <ActionButton ctx={ctx} action={`/dashboard/orders/${order.id}/cancel`} kind="danger" label={o.cancel} />
          ) : null}
        </div>
      ) : null}
      {payment.success && order.status === 'paid' && pastReversalWindow(order, now) ? <p class="muted">{o.reverseLate}</p> : null}
      <Timeline ctx={ctx} events={timeline} people={people} />
    </Layout>
  );
}

/** How the order was paid: the deposit, when and by whom it was matched, and why. */
function PaymentSection({ ctx, payment, people }: { ctx: ConsoleRequestContext; payment: Payment | undefined; people: ReadonlyMap<string, string> }) {
  const { t } = ctx;
  const o = t.orders;
  return (
    <section aria-labelledby="payment">
      <h2 id="payment">{o.payment}</h2>
      {payment ? (
        <Facts
          rows={[
            [t.common.amount, yen(payment.amount)],
            [t.deposits.counterparty, payment.counterparty],
            [o.deposit, payment.transaction_id ? <a href={`/dashboard/deposits/${payment.transaction_id}`}>{t.audit.openDeposit}</a> : '—'],
            [t.deposits.occurredAt, tokyoTime(payment.occurred_at)],
            [o.matchedAt, tokyoTime(payment.matched_at)],
            [o.decidedBy, deciderWords(ctx, payment.decided_by, people)],
            [o.trigger, triggerWords(ctx, payment.trigger)],
            [o.reason, reasonText(ctx, payment.reason)],
          ]}
        />
      ) : (
        <p>{o.noPayment}</p>
      )}
    </section>
  );
}

/** Payments of the order that a person reversed, oldest first: the payment as it was, and when, by whom and why it was reversed. */
function ReversedPayments({ ctx, reversals, people }: { ctx: ConsoleRequestContext; reversals: PaymentReversal[]; people: ReadonlyMap<string, string> }) {
  const { t } = ctx;
  const o = t.orders;
  return (
    <section aria-labelledby="reversed-payments">
      <h2 id="reversed-payments">{o.reversedPayments}</h2>
      <Table
        ctx={ctx}
        caption={o.reversedPayments}
        rows={reversals}
        columns={[
          {
            header: o.deposit,
            cell: (r) => (r.payment.transaction_id ? <a href={`/dashboard/deposits/${r.payment.transaction_id}`}>{t.audit.openDeposit}</a> : '—'),
          },
          { header: t.common.amount, cell: (r) => yen(r.payment.amount), class: 'num' },
          { header: t.deposits.counterparty, cell: (r) => r.payment.counterparty },
          { header: o.matchedAt, cell: (r) => tokyoTime(r.payment.matched_at) },
          { header: o.reversedAt, cell: (r) => <a href={`/dashboard/events/${r.eventId}`}>{tokyoTime(r.reversedAt)}</a> },
          { header: o.reversedBy, cell: (r) => (r.decidedBy ? deciderWords(ctx, r.decidedBy, people) : '') },
          { header: o.reversalReason, cell: (r) => r.reason ?? o.noReason },
        ]}
      />
    </section>
  );
}

/** Held and unmatched deposits of the order's account and amount, newest first, each linking to its page where it is confirmed. */
function DepositsThatCouldPay({ ctx, order, deposits }: { ctx: ConsoleRequestContext; order: OrderRow; deposits: TransactionRow[] }) {
  const { t } = ctx;
  const o = t.orders;
  const d = t.deposits;
  return (
    <section aria-labelledby="could-pay">
      <h2 id="could-pay">{o.couldPay}</h2>
      <p class="muted">{o.couldPayIntro}</p>
      <Table
        ctx={ctx}
        caption={o.couldPay}
        rows={deposits}
        empty={o.couldPayNone}
        columns={[
          {
            header: d.counterparty,
            cell: (deposit) => (
              <>
                <a href={`/dashboard/deposits/${deposit.id}`}>{deposit.counterparty}</a>
                {deposit.occurredAt.getTime() < order.orderedAt.getTime() ? (
                  <>
                    <br />
                    <span class="muted">{o.beforeOrder}</span>
                  </>
                ) : null}
              </>
            ),
          },
          { header: t.common.amount, cell: (deposit) => yen(deposit.amount), class: 'num' },
          { header: d.occurredAt, cell: (deposit) => tokyoTime(deposit.occurredAt) },
          { header: t.common.status, cell: (deposit) => <Badge kind={deposit.status}>{d.statuses[deposit.status] ?? deposit.status}</Badge> },
        ]}
      />
    </section>
  );
}

/** The order's events, oldest first, with a reversal's reason and who decided it. */
function Timeline({ ctx, events, people }: { ctx: ConsoleRequestContext; events: EventRow[]; people: ReadonlyMap<string, string> }) {
  const { t } = ctx;
  const o = t.orders;
  return (
    <section aria-labelledby="timeline">
      <h2 id="timeline">{o.timeline}</h2>
      {events.length === 0 ? (
        <p>{t.common.none}</p>
      ) : (
        <ol class="timeline">
          {events.map((event) => {
            const reversal = (event.data as { reversal?: { reason?: string | null; decided_by?: string } }).reversal;
            return (
              <li>
                <time dateTime={event.createdAt.toISOString()}>{tokyoTime(event.createdAt)}</time>{' '}
                <a href={`/dashboard/events/${event.id}`}>{eventTypeWords(ctx, event.type)}</a>
                {reversal ? (
                  <p class="muted">
                    {deciderWords(ctx, reversal.decided_by ?? '', people)} {reversal.reason ? `— ${reversal.reason}` : ''}
                  </p>
                ) : null}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
