import { ALL_EVENT_TYPES, type WebhookEndpoint } from '@pmatch/contracts';
import { Layout, Notice, PostForm, Table } from '../components/layout';
import type { ConsoleRequestContext } from '../request';
import { EndpointState, EventChoices } from './webhook-endpoint';

/** The endpoints of the mode, with the form that adds one (admins). */
export function EndpointListScreen({
  ctx,
  endpoints,
  refused,
}: {
  ctx: ConsoleRequestContext;
  endpoints: WebhookEndpoint[];
  /** A new endpoint refused: why, and what was entered. */
  refused?: { problem: string; url: string; events: string[] } | undefined;
}) {
  const { t } = ctx;
  const w = t.webhooks;
  const done = new URLSearchParams(ctx.query).get('done');
  return (
    <Layout ctx={ctx} title={w.title} section="webhooks">
      {done === 'deleted' ? <Notice kind="success">{w.deleted}</Notice> : null}
      <Table
        ctx={ctx}
        caption={w.title}
        rows={endpoints}
        columns={[
          { header: w.url, cell: (e) => <a href={`/dashboard/webhooks/${e.id}`}>{e.url}</a> },
          { header: t.common.status, cell: (e) => <EndpointState ctx={ctx} endpoint={e} /> },
          { header: w.events, cell: (e) => (e.enabled_events.includes(ALL_EVENT_TYPES) ? w.allEvents : e.enabled_events.join(', ')) },
        ]}
      />
      {ctx.signedIn!.actor.role === 'admin' ? (
        <section aria-labelledby="create">
          <h2 id="create">
            {w.create} <span class="muted">({w.limit})</span>
          </h2>
          {refused ? <Notice kind="error">{refused.problem}</Notice> : null}
          <PostForm ctx={ctx} action="/dashboard/webhooks" class="stack">
            <label>
              {w.url}
              <input type="url" name="url" required placeholder="https://" value={refused?.url ?? ''} />
            </label>
            <EventChoices ctx={ctx} selected={refused?.events ?? [ALL_EVENT_TYPES]} />
            <div>
              <button type="submit">{w.create}</button>
            </div>
          </PostForm>
        </section>
      ) : null}
    </Layout>
  );
}
