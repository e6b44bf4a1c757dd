import { EVENT_TYPES } from '@pmatch/contracts';
import { eventObject, type EventRow } from '@pmatch/db';
import { Facts, Layout, Pager } from '../components/layout';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';
import { eventSubjectWords, eventTypeWords } from '../words';
import { EventTable } from './overview';

/** Events newest first with a type filter. */
export function EventListScreen({ ctx, type, rows, hasMore }: { ctx: ConsoleRequestContext; type: string | undefined; rows: EventRow[]; hasMore: boolean }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t.events.title} section="events">
      <form method="get" action="/dashboard/events" class="form-grid panel" role="search">
        <label>
          {t.events.type}
          <select name="type">
            <option value="">{t.common.all}</option>
            {EVENT_TYPES.filter((e) => e !== 'webhook.test').map((e) => (
              <option value={e} selected={type === e}>
                {eventTypeWords(ctx, e)}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">{t.common.search}</button>
      </form>
      <EventTable ctx={ctx} events={rows} />
      <Pager ctx={ctx} next={hasMore ? { after: rows.at(-1)!.id } : undefined} />
    </Layout>
  );
}

/** One event's JSON exactly as webhooks deliver it. */
export function EventScreen({ ctx, row }: { ctx: ConsoleRequestContext; row: EventRow }) {
  const { t } = ctx;
  const subject = eventSubjectWords(ctx, row.data);
  return (
    <Layout ctx={ctx} title={t.events.detailTitle(eventTypeWords(ctx, row.type))} section="events">
      <Facts
        rows={[
          [t.events.type, eventTypeWords(ctx, row.type)],
          [t.common.date, tokyoTime(row.createdAt)],
          [t.audit.object, subject === undefined ? '—' : <a href={subject.href}>{subject.text}</a>],
        ]}
      />
      <h2 id="json">{t.events.json}</h2>
      <pre aria-labelledby="json" tabIndex={0}>
        {JSON.stringify(eventObject(row), null, 2)}
      </pre>
    </Layout>
  );
}
