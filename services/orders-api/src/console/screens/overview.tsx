import type { EventRow } from '@pmatch/db';
import type { OverviewCounts } from '../../data/console-search';
import { Layout, PostForm, Table } from '../components/layout';
import { numberText, tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';
import { eventSubjectWords, eventTypeWords } from '../words';

/**
 * What waits for the seller this morning: held and unmatched deposits, orders, failing endpoints, the
 * latest events. `askAboutRules` (an admin, rules never saved, `kana_width` off) puts first the
 * question of how names are compared, with the rules it would preview or keep.
 */
export function OverviewScreen({
  ctx,
  counts,
  events,
  cap,
  askAboutRules,
}: {
  ctx: ConsoleRequestContext;
  counts: OverviewCounts;
  events: EventRow[];
  cap: number;
  askAboutRules?: { current: readonly string[] } | undefined;
}) {
  const { t, language } = ctx;
  const figure = (n: number) => (n > cap ? t.overview.more(numberText(cap, language)) : numberText(n, language));
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
  return (
    <Layout ctx={ctx} title={t.overview.title} section="overview">
      {askAboutRules ? <RulesQuestion ctx={ctx} current={askAboutRules.current} /> : null}
      <div class="cards">
        {card(t.overview.heldWaiting, counts.held, '/dashboard/deposits?status=held')}
        {card(t.overview.unmatchedWaiting, counts.unmatched, '/dashboard/deposits?status=unmatched')}
        {card(t.overview.openOrders, counts.open, '/dashboard/orders?status=open')}
        {card(t.overview.expiringToday, counts.expiringToday, '/dashboard/orders?status=open')}
        {card(t.overview.endpointsTrouble, counts.endpointsInTrouble, '/dashboard/webhooks')}
      </div>
      <h2>{t.overview.latestEvents}</h2>
      <EventTable ctx={ctx} events={events} />
    </Layout>
  );
}

/** The question of a new organisation's first admin: compare names as the bank prints them, or fold kana widths? */
function RulesQuestion({ ctx, current }: { ctx: ConsoleRequestContext; current: readonly string[] }) {
  const o = ctx.t.overview;
  const rules = (list: readonly string[]) => list.map((rule) => <input type="hidden" name="rules" value={rule} />);
  return (
    <section class="panel" aria-labelledby="rules-question">
      <h2 id="rules-question">{o.rulesTitle}</h2>
      <p>{o.rulesNow}</p>
      <p>{o.rulesOffer}</p>
      <div class="actions">
        <PostForm ctx={ctx} action="/dashboard/settings/rules/preview">
          {rules([...current, 'kana_width'])}
          <button type="submit">{o.rulesPreview}</button>
        </PostForm>
        <PostForm ctx={ctx} action="/dashboard/settings/rules/apply">
          {rules(current)}
          <button type="submit" class="secondary">
            {o.rulesKeep}
          </button>
        </PostForm>
      </div>
      <p class="muted">{o.rulesLater}</p>
    </section>
  );
}

export function EventTable({ ctx, events }: { ctx: ConsoleRequestContext; events: { id: string; type: string; createdAt: Date; data: unknown }[] }) {
  const { t } = ctx;
  const subject = (data: unknown) => {
    const about = eventSubjectWords(ctx, data);
    return about === undefined ? '' : <a href={about.href}>{about.text}</a>;
  };
  return (
    <Table
      ctx={ctx}
      caption={t.events.title}
      rows={events}
      columns={[
        { header: t.common.date, cell: (event) => tokyoTime(event.createdAt) },
        { header: t.events.type, cell: (event) => eventTypeWords(ctx, event.type) },
        { header: t.audit.object, cell: (event) => subject(event.data) },
        {
          header: t.events.open,
          cell: (event) => (
            <a href={`/dashboard/events/${event.id}`} aria-label={`${t.events.open}: ${eventTypeWords(ctx, event.type)} ${tokyoTime(event.createdAt)}`}>
              {t.events.open}
            </a>
          ),
        },
      ]}
    />
  );
}
