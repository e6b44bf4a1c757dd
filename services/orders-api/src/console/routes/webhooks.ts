import {
  ALL_EVENT_TYPES,
  CreateWebhookEndpointRequest,
  EventId,
  SUBSCRIBABLE_EVENT_TYPES,
  TEST_EVENT_ID_PREFIX,
  UpdateWebhookEndpointRequest,
} from '@pmatch/contracts';
import type { WebhookEndpointRow } from '@pmatch/db';
import { AppError } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router, type Request, type Response } from 'express';
import { webhookEndpointView } from '../../domain/webhook-endpoints';
import type { ConsoleAppDeps } from '../../use-cases/console-login';
import {
  changeWebhookEndpoint,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  findVisibleWebhookEndpoint,
  getWebhookEndpointList,
} from '../../use-cases/manage-webhook-endpoints';
import { rotateWebhookSecretShownOnce, showWebhookSecret } from '../../use-cases/manage-webhook-secrets';
import { takeShownOnce, type ShownOnce } from '../../use-cases/shown-once';
import { getDeliveryLog, getTestSends, resendWebhook, sendTestWebhook } from '../../use-cases/webhook-deliveries';
import { redirectDone, sendScreen } from '../render';
import { reentryRefusal } from '../reentry';
import { auditContextOf, contextOf, field, fieldList, pathId, queryText, requireRole, showToOf, signedInOf } from '../request';
import { DeleteEndpointScreen, EndpointScreen, RotateSecretScreen } from '../screens/webhook-endpoint';
import { EndpointListScreen } from '../screens/webhooks';

const selectedEvents = (req: Request): string[] => {
  const chosen = fieldList(req, 'events').filter((e) => (SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(e));
  return chosen.length === 0 || chosen.length === SUBSCRIBABLE_EVENT_TYPES.length ? [ALL_EVENT_TYPES] : chosen;
};

/** Endpoints of the mode, their secrets (admins, password again, shown once after a redirect), test events, the delivery log and resends. */
export function webhookRoutes(deps: ConsoleAppDeps): Router {
  const router = Router();

  /** The endpoint list, with a refused new endpoint's reason and what was entered. */
  const sendList = async (req: Request, res: Response, refused?: { problem: string; url: string; events: string[] }) => {
    const list = await getWebhookEndpointList(deps, signedInOf(req).actor, { limit: 100 });
    sendScreen(res, EndpointListScreen, { ctx: contextOf(req), endpoints: list.data, refused }, refused === undefined ? 200 : 400);
  };

  router.get('/dashboard/webhooks', async (req, res) => {
    await sendList(req, res);
  });

  router.post('/dashboard/webhooks', requireRole('admin'), async (req, res) => {
    const url = (field(req, 'url') ?? '').trim();
    let created: { id: string };
    try {
      const request = parseInput(CreateWebhookEndpointRequest, { url, enabled_events: selectedEvents(req) });
      created = await createWebhookEndpoint(deps, signedInOf(req).actor, request, auditContextOf(req));
    } catch (error) {
      if (!(error instanceof AppError && error.status < 500 && error.code !== 'insufficient_scope')) throw error;
      const { t } = contextOf(req);
      const problem = t.errors.codes[error.code] ?? t.errors.codes.parameter_invalid!;
      return sendList(req, res, { problem, url, events: selectedEvents(req) });
    }
    redirectDone(res, `/dashboard/webhooks/${created.id}`, 'created');
  });

  // `?secret=` names a secret kept to be shown once to this session: a reload finds it gone.
  router.get('/dashboard/webhooks/:id', async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    const displayId = queryText(req, 'secret');
    const shown = displayId === undefined ? undefined : await takeShownOnce(deps, showToOf(req), 'webhook_secret', displayId);
    const secret = shown?.endpointId === endpoint.id ? shown : undefined;
    await sendEndpoint(deps, req, res, endpoint, { secret, secretGone: displayId !== undefined && secret === undefined });
  });

  router.post('/dashboard/webhooks/:id', requireRole('admin'), async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    const enabled = field(req, 'enabled');
    const change = parseInput(UpdateWebhookEndpointRequest, enabled === undefined ? { enabled_events: selectedEvents(req) } : { enabled: enabled === 'true' });
    await changeWebhookEndpoint(deps, endpoint, change, auditContextOf(req));
    redirectDone(res, `/dashboard/webhooks/${endpoint.id}`, enabled === undefined ? 'updated' : enabled === 'true' ? 'enabled' : 'disabled');
  });

  router.get('/dashboard/webhooks/:id/delete', requireRole('admin'), async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    sendScreen(res, DeleteEndpointScreen, { ctx: contextOf(req), endpoint: webhookEndpointView(endpoint) });
  });

  router.post('/dashboard/webhooks/:id/delete', requireRole('admin'), async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    await deleteWebhookEndpoint(deps, endpoint, auditContextOf(req));
    redirectDone(res, '/dashboard/webhooks', 'deleted');
  });

  router.post('/dashboard/webhooks/:id/test', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const endpoint = await findVisibleWebhookEndpoint(deps, actor, pathId(req));
    const event = await sendTestWebhook(deps, actor, endpoint, auditContextOf(req));
    redirectDone(res, `/dashboard/webhooks/${endpoint.id}`, 'tested', { test_event: event.id });
  });

  router.post('/dashboard/webhooks/:id/resend', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const endpoint = await findVisibleWebhookEndpoint(deps, actor, pathId(req));
    const eventId = field(req, 'event_id') ?? '';
    await resendWebhook(deps, actor, endpoint, { event_id: eventId }, auditContextOf(req));
    redirectDone(res, `/dashboard/webhooks/${endpoint.id}`, 'resent', { resent_event: eventId, event_id: eventId });
  });

  secretRoutes(router, deps);
  return router;
}

/** An endpoint's secret: shown once after the password is typed again, or reissued (asked first). */
function secretRoutes(router: Router, deps: ConsoleAppDeps): void {
  // The secret is shown by the GET after the redirect, once, never by the POST that asked for it.
  router.post('/dashboard/webhooks/:id/secret', requireRole('admin'), async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    const shown = await showWebhookSecret(deps, deps.throttles.reentry, endpoint, auditContextOf(req), field(req, 'password') ?? '', showToOf(req));
    if (shown.outcome === 'done') return res.redirect(303, `/dashboard/webhooks/${endpoint.id}?secret=${shown.displayId}#secret`);
    await sendEndpoint(deps, req, res, endpoint, { problem: reentryRefusal(contextOf(req).t, shown.outcome, 'password') });
  });

  router.get('/dashboard/webhooks/:id/rotate-secret', requireRole('admin'), async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    sendScreen(res, RotateSecretScreen, { ctx: contextOf(req), endpoint: webhookEndpointView(endpoint) });
  });

  router.post('/dashboard/webhooks/:id/rotate-secret', requireRole('admin'), async (req, res) => {
    const endpoint = await findVisibleWebhookEndpoint(deps, signedInOf(req).actor, pathId(req));
    const rotated = await rotateWebhookSecretShownOnce(
      deps,
      deps.throttles.reentry,
      endpoint,
      auditContextOf(req),
      field(req, 'password') ?? '',
      showToOf(req),
    );
    if (rotated.outcome === 'done') return res.redirect(303, `/dashboard/webhooks/${endpoint.id}?secret=${rotated.displayId}#secret`);
    const refusal = reentryRefusal(contextOf(req).t, rotated.outcome, 'password');
    sendScreen(res, RotateSecretScreen, { ctx: contextOf(req), endpoint: webhookEndpointView(endpoint), problem: refusal.message }, refusal.status);
  });
}

/** The most test sends an endpoint's delivery log shows. */
const TEST_SENDS_SHOWN = 20;

/** An endpoint's screen with a slice of its delivery log, filtered by the query's `event_id` and continued after its `after`. */
async function sendEndpoint(
  deps: ConsoleAppDeps,
  req: Request,
  res: Response,
  endpoint: WebhookEndpointRow,
  shown: { secret?: ShownOnce['webhook_secret'] | undefined; secretGone?: boolean; problem?: { status: number; message: string } } = {},
): Promise<void> {
  const ctx = contextOf(req);
  const eventId = queryText(req, 'event_id');
  const after = queryText(req, 'after');
  const searched = eventId !== undefined && EventId.safeParse(eventId).success ? eventId : undefined;
  const continued = after !== undefined && /^dla_[0-9]{1,18}$/.test(after) ? after : undefined;
  const log = await getDeliveryLog(deps, endpoint, {
    limit: 50,
    ...(searched === undefined ? {} : { event_id: searched }),
    ...(continued === undefined ? {} : { starting_after: continued }),
  });
  // Test sends join the log's first page, and a search for a test event's id.
  const testSends =
    continued === undefined && (searched === undefined || searched.startsWith(TEST_EVENT_ID_PREFIX))
      ? (await getTestSends(deps, endpoint, TEST_SENDS_SHOWN)).filter((s) => searched === undefined || s.eventId === searched)
      : [];
  sendScreen(
    res,
    EndpointScreen,
    {
      ctx,
      endpoint: webhookEndpointView(endpoint),
      log: log.data,
      testSends,
      hasMore: log.has_more,
      eventId,
      secret: shown.secret,
      secretGone: shown.secretGone === true,
      problem: shown.problem?.message,
    },
    shown.problem?.status ?? 200,
  );
}
