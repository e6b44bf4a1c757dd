import { EVENT_TYPES, type EventType } from '@pmatch/contracts';
import { eventView } from '@pmatch/db';
import { Router } from 'express';
import { findEvent, latestEvents } from '../../data/console-search';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { tokyoTime } from '../format';
import { ConsoleRefusal, contextOf, pathId, queryText, signedInOf } from '../http';
import { sendPage } from '../render';
import { Facts, Layout, Pager } from '../views/layout';
import { EventTable } from './overview';

const PAGE_SIZE = 50;

/** Events newest first with a type filter, and each one's JSON exactly as webhooks deliver it. */
export function eventPages(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/events', async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    const type = EVENT_TYPES.includes(req.query.type as EventType) ? (req.query.type as string) : undefined;
    const after = queryText(req, 'after');
    const page = (await latestEvents(deps.database.prisma, signedInOf(req).actor, {
      limit: PAGE_SIZE,
      ...(type === undefined ? {} : { type }),
      ...(after !== undefined && /^evt_[0-9A-Za-z]{12,40}$/.test(after) ? { beforeId: after } : {}),
    })) ?? { rows: [], hasMore: false };
    sendPage(
      res,
      <Layout ctx={ctx} title={t.events.title} section="events">
        <form method="get" action="/dashboard/events" class="form-grid panel" role="search">
          <label>
            {t.events.type}
            <select name="type">
              <option value="">{t.common.all}</option>
              {EVENT_TYPES.filter((e) => e !== 'webhook.test').map((e) => (
                <option value={e} selected={type === e}>
                  {e}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">{t.common.search}</button>
        </form>
        <EventTable ctx={ctx} events={page.rows} />
        <Pager ctx={ctx} next={page.hasMore ? { after: page.rows.at(-1)!.id } : undefined} />
      </Layout>,
    );
  });

  router.get('/dashboard/events/:id', async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    const row = await findEvent(deps.database.prisma, signedInOf(req).actor, pathId(req));
    if (row === null) throw new ConsoleRefusal(404, 'no such event');
    sendPage(
      res,
      <Layout ctx={ctx} title={t.events.detailTitle(row.id)} section="events">
        <Facts
          rows={[
            [t.events.type, <code>{row.type}</code>],
            [t.common.date, tokyoTime(row.createdAt)],
          ]}
        />
        <h2 id="json">{t.events.json}</h2>
        <pre aria-labelledby="json" tabIndex={0}>
          {JSON.stringify(eventView(row), null, 2)}
        </pre>
      </Layout>,
    );
  });

  return router;
}
