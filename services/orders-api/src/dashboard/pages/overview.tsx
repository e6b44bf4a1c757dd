import { Router } from 'express';
import { latestEvents, overviewCounts } from '../../data/console-search';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { numberText, tokyoDay, tokyoTime } from '../format';
import { contextOf, signedInOf, type ConsoleRequestContext } from '../http';
import { sendPage } from '../render';
import { Layout, Table } from '../views/layout';

/** Figures are counted to this many at most; past it the card says "10,000 or more". */
const COUNT_CAP = 10_000;

/** What waits for the seller this morning: held and unmatched deposits, orders, failing endpoints, the latest events. */
export function overviewPage(deps: OrdersApiDeps): Router {
  const router = Router();
  router.get('/dashboard/', async (req, res) => {
    const ctx = contextOf(req);
    const { t, language } = ctx;
    const { actor } = signedInOf(req);
    const now = deps.clock.now();
    const [counts, events] = await Promise.all([
      overviewCounts(deps.database.prisma, actor, { now, end: tokyoDay(now).end }, COUNT_CAP),
      latestEvents(deps.database.prisma, actor, { limit: 10 }),
    ]);
    const figure = (n: number) => (n > COUNT_CAP ? t.overview.more(numberText(COUNT_CAP, language)) : numberText(n, language));
    const card = (title: string, n: number, href: string) => (
      <div class="card">
        <h2>{title}</h2>
        <p class="figure">{figure(n)}</p>
        <a href={href}>
          {t.overview.viewAll}
          <span class="muted"> — {title}</span>
        </a>
      </div>
    );
    sendPage(
      res,
      <Layout ctx={ctx} title={t.overview.title} section="overview">
        <div class="cards">
          {card(t.overview.heldWaiting, counts.held, '/dashboard/deposits?status=held')}
          {card(t.overview.unmatchedWaiting, counts.unmatched, '/dashboard/deposits?status=unmatched')}
          {card(t.overview.openOrders, counts.open, '/dashboard/orders?status=open')}
          {card(t.overview.expiringToday, counts.expiringToday, '/dashboard/orders?status=open')}
          {card(t.overview.endpointsTrouble, counts.endpointsInTrouble, '/dashboard/webhooks')}
        </div>
        <h2>{t.overview.latestEvents}</h2>
        <EventTable ctx={ctx} events={events?.rows ?? []} />
      </Layout>,
    );
  });
  return router;
}

export function EventTable({ ctx, events }: { ctx: ConsoleRequestContext; events: { id: string; type: string; createdAt: Date; data: unknown }[] }) {
  const { t } = ctx;
  const objectLink = (object: string) =>
    object.startsWith('ord_') ? (
      <a href={`/dashboard/orders/${object}`}>{object}</a>
    ) : object.startsWith('txn_') ? (
      <a href={`/dashboard/deposits/${object}`}>{object}</a>
    ) : (
      object
    );
  return (
    <Table
      ctx={ctx}
      rows={events}
      columns={[
        { header: t.common.date, cell: (event) => tokyoTime(event.createdAt) },
        { header: t.events.type, cell: (event) => <code>{event.type}</code> },
        { header: t.common.id, cell: (event) => <a href={`/dashboard/events/${event.id}`}>{event.id}</a> },
        { header: t.audit.object, cell: (event) => objectLink((event.data as { object?: { id?: string } }).object?.id ?? '') },
      ]}
    />
  );
}
