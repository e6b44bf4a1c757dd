import {
  ALL_EVENT_TYPES,
  CreateWebhookEndpointRequest,
  EventId,
  UpdateWebhookEndpointRequest,
  SUBSCRIBABLE_EVENT_TYPES,
  type WebhookEndpoint,
  type WebhookEndpointSecret,
} from '@pmatch/contracts';
import type { WebhookEndpointRow } from '@pmatch/db';
import { parseInput } from '@pmatch/platform';
import { Router, type Request } from 'express';
import { webhookEndpointView } from '../../domain/webhook-endpoints';
import { recordAudit } from '../../use-cases/audit';
import { passwordConfirmed } from '../../use-cases/console-reauthenticate';
import type { OrdersApiDeps } from '../../use-cases/deps';
import {
  changeWebhookEndpoint,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  findVisibleWebhookEndpoint,
  getWebhookEndpointList,
} from '../../use-cases/manage-webhook-endpoints';
import { revealWebhookSecret, rotateWebhookSecret } from '../../use-cases/manage-webhook-secrets';
import { getDeliveryLog, resendWebhook, sendTestWebhook } from '../../use-cases/webhook-deliveries';
import { auditContextOf, contextOf, field, fieldList, pathId, queryText, requireRole, signedInOf, type ConsoleRequestContext } from '../http';
import { redirectDone, sendPage } from '../render';
import { Layout, Notice, PostForm, Table } from '../views/layout';
import { EndpointDetail, EndpointState, EventChoices } from './webhook-endpoint';

const selectedEvents = (req: Request): string[] => {
  const chosen = fieldList(req, 'events').filter((e) => (SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(e));
  return chosen.length === 0 || chosen.length === SUBSCRIBABLE_EVENT_TYPES.length ? [ALL_EVENT_TYPES] : chosen;
};

/** Endpoints of the mode, their secrets (admins, password again), test events, the delivery log and resends. */
export function webhookPages(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/webhooks', async (req, res) => {
    const list = await getWebhookEndpointList(deps, signedInOf(req).actor, { limit: 100 });
    sendPage(res, <EndpointList ctx={contextOf(req)} endpoints={list.data} />);
  });

  router.post('/dashboard/webhooks', requireRole('admin'), async (req, res) => {
    const request = parseInput(CreateWebhookEndpointRequest, { url: (field(req, 'url') ?? '').trim(), enabled_events: selectedEvents(req) });
    const created = await createWebhookEndpoint(deps, signedInOf(req).actor, request);
    await recordAudit(deps, auditContextOf(req), 'webhook_endpoint.create', created.id, { url: created.url, enabled_events: created.enabled_events });
    redirectDone(res, `/dashboard/webhooks/${created.id}`, 'created');
  });

  router.get('/dashboard/webhooks/:id', async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    sendPage(res, await endpointDetail(deps, req, endpoint));
  });

  router.post('/dashboard/webhooks/:id', requireRole('admin'), async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    const enabled = field(req, 'enabled');
    const change = parseInput(UpdateWebhookEndpointRequest, enabled === undefined ? { enabled_events: selectedEvents(req) } : { enabled: enabled === 'true' });
    await changeWebhookEndpoint(deps, endpoint, change);
    await recordAudit(deps, auditContextOf(req), 'webhook_endpoint.update', endpoint.id, change);
    redirectDone(res, `/dashboard/webhooks/${endpoint.id}`, enabled === undefined ? 'updated' : enabled === 'true' ? 'enabled' : 'disabled');
  });

  router.post('/dashboard/webhooks/:id/delete', requireRole('admin'), async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    await deleteWebhookEndpoint(deps, endpoint);
    await recordAudit(deps, auditContextOf(req), 'webhook_endpoint.delete', endpoint.id, { url: endpoint.url });
    redirectDone(res, '/dashboard/webhooks', 'deleted');
  });

  router.post('/dashboard/webhooks/:id/test', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const endpoint = await findVisibleWebhookEndpoint(deps, actor, pathId(req));
    const event = await sendTestWebhook(deps, actor, endpoint);
    await recordAudit(deps, auditContextOf(req), 'webhook_endpoint.test', endpoint.id, { event_id: event.id });
    redirectDone(res, `/dashboard/webhooks/${endpoint.id}`, 'tested', { test_event: event.id });
  });

  router.post('/dashboard/webhooks/:id/resend', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const endpoint = await findVisibleWebhookEndpoint(deps, actor, pathId(req));
    const eventId = field(req, 'event_id') ?? '';
    await resendWebhook(deps, actor, endpoint, { event_id: eventId });
    await recordAudit(deps, auditContextOf(req), 'webhook_endpoint.resend', endpoint.id, { event_id: eventId });
    redirectDone(res, `/dashboard/webhooks/${endpoint.id}`, 'resent', { resent_event: eventId, event_id: eventId });
  });

  for (const [action, audit] of [
    ['secret', 'webhook_endpoint.reveal_secret'],
    ['rotate-secret', 'webhook_endpoint.rotate_secret'],
  ] as const) {
    router.post(`/dashboard/webhooks/:id/${action}`, requireRole('admin'), async (req, res) => {
      const { actor } = signedInOf(req);
      const endpoint = await findVisibleWebhookEndpoint(deps, actor, pathId(req));
      if (!(await passwordConfirmed(deps, actor, field(req, 'password') ?? ''))) {
        return sendPage(res, await endpointDetail(deps, req, endpoint, undefined, contextOf(req).t.webhooks.wrongPassword), 403);
      }
      const secret = action === 'secret' ? await revealWebhookSecret(deps, actor, endpoint.id) : await rotateWebhookSecret(deps, endpoint);
      await recordAudit(deps, auditContextOf(req), audit, endpoint.id, {});
      sendPage(res, await endpointDetail(deps, req, endpoint, secret));
    });
  }

  return router;
}

/** An endpoint's page with a page of its delivery log, filtered by the query's `event_id` and paged by its `after`. */
async function endpointDetail(deps: OrdersApiDeps, req: Request, endpoint: WebhookEndpointRow, secret?: WebhookEndpointSecret, problem?: string) {
  const eventId = queryText(req, 'event_id');
  const after = queryText(req, 'after');
  const log = await getDeliveryLog(deps, endpoint, {
    limit: 50,
    ...(eventId !== undefined && EventId.safeParse(eventId).success ? { event_id: eventId } : {}),
    ...(after !== undefined && /^dla_[0-9]{1,18}$/.test(after) ? { starting_after: after } : {}),
  });
  return (
    <EndpointDetail
      ctx={contextOf(req)}
      endpoint={webhookEndpointView(endpoint)}
      log={log.data}
      hasMore={log.has_more}
      eventId={eventId}
      secret={secret}
      problem={problem}
    />
  );
}

function EndpointList({ ctx, endpoints }: { ctx: ConsoleRequestContext; endpoints: WebhookEndpoint[] }) {
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
          <PostForm ctx={ctx} action="/dashboard/webhooks" class="stack">
            <label>
              {w.url}
              <input type="url" name="url" required placeholder="https://" />
            </label>
            <EventChoices ctx={ctx} selected={[ALL_EVENT_TYPES]} />
            <div>
              <button type="submit">{w.create}</button>
            </div>
          </PostForm>
        </section>
      ) : null}
    </Layout>
  );
}
