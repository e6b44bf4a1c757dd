import {
  AppError,
  CreateWebhookEndpointRequest,
  DeliveryLogQuery,
  EmptyRequest,
  ListQuery,
  ResendRequest,
  UpdateWebhookEndpointRequest,
  WEBHOOK_LIMITS,
  WebhookEndpointId,
  receivesEventType,
  type EventType,
} from '@pmatch/contracts';
import type { PrismaClient, WebhookEndpointRow } from '@pmatch/db';
import {
  newSigningSecret,
  parseInput,
  resolveWithSystem,
  vetWebhookUrl,
  type AddressPolicy,
  type Clock,
  type SecretBox,
} from '@pmatch/platform';
import { Router, type Request } from 'express';
import {
  DELIVERY_ATTEMPT_ID_PREFIX,
  deliveryAttemptView,
  enablementChange,
  lastReplacedSecretExpiry,
  nextRotationPossibleAt,
  previousSecretExpiry,
  storedEnabledEvents,
  testEvent,
  webhookEndpointView,
} from '../domain/webhook-endpoints';
import {
  deleteWebhookEndpoint,
  findEventInScope,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listDeliveryAttempts,
  listWebhookEndpoints,
  requestFromDispatcher,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../data/webhook-endpoints';
import { authOf } from './auth';
import { pathId } from './ids';

export interface WebhookEndpointsDeps {
  prisma: PrismaClient;
  clock: Clock;
  secretBox: SecretBox;
  /** Which addresses a webhook URL may lead to (WEBHOOK_ALLOWED_CIDRS exempts test receivers). */
  addressPolicy: AddressPolicy;
  /** Called after outbox rows were committed, so the relay publishes them without waiting. */
  onRecorded: () => void;
}

/** /v1/webhook-endpoints (DESIGN §2 "Paths the spec does not show"): endpoints per mode, secrets, tests, the log. */
export function webhookEndpointsRouter(deps: WebhookEndpointsDeps): Router {
  const router = Router();

  // An endpoint receives the events of every bank account of its organisation and mode, so a key
  // limited to one bank account may not see or change endpoints (nor their secrets and logs).
  router.use('/v1/webhook-endpoints', (req, _res, next) => {
    if (authOf(req).bankAccountId !== null) {
      throw new AppError(
        'insufficient_scope',
        'This API key is limited to one bank account, but a webhook endpoint receives the events of every bank account of the organisation; use a key without a bank-account limit to manage webhook endpoints.',
      );
    }
    next();
  });

  const vetUrl = async (url: string) => (await vetWebhookUrl(url, deps.addressPolicy, resolveWithSystem)).href;

  const endpointOf = async (req: Request<{ id: string }>): Promise<WebhookEndpointRow> => {
    const id = pathId(WebhookEndpointId, req.params.id, 'webhook endpoint');
    const row = await findWebhookEndpoint(deps.prisma, authOf(req), id);
    if (row === null) throw new AppError('resource_missing', `No such webhook endpoint: ${id}.`, { param: 'id' });
    return row;
  };

  router.post('/v1/webhook-endpoints', async (req, res) => {
    const auth = authOf(req);
    const request = parseInput(CreateWebhookEndpointRequest, req.body);
    const url = await vetUrl(request.url);
    const secret = newSigningSecret();
    const row = await insertWebhookEndpoint(
      deps.prisma,
      {
        organisationId: auth.organisationId,
        mode: auth.mode,
        url,
        enabledEvents: storedEnabledEvents(request.enabled_events),
        secretEncrypted: deps.secretBox.seal(secret),
      },
      deps.clock.now(),
    );
    res.status(201).json({ ...webhookEndpointView(row), secret });
  });

  // At most five per mode, so the list is paged in memory; the parameters are those of every list.
  router.get('/v1/webhook-endpoints', async (req, res) => {
    const query = parseInput(ListQuery, req.query, 'query');
    const rows = await listWebhookEndpoints(deps.prisma, authOf(req));
    const start = query.starting_after === undefined ? 0 : rows.findIndex((r) => r.id === query.starting_after) + 1;
    if (start === 0 && query.starting_after !== undefined) {
      throw new AppError('parameter_invalid', `No such webhook endpoint: ${query.starting_after}.`, { param: 'starting_after' });
    }
    const page = rows.slice(start, start + query.limit);
    res.json({ object: 'list', data: page.map(webhookEndpointView), has_more: start + query.limit < rows.length });
  });

  router.get('/v1/webhook-endpoints/:id', async (req, res) => {
    res.json(webhookEndpointView(await endpointOf(req)));
  });

  router.patch('/v1/webhook-endpoints/:id', async (req, res) => {
    const row = await endpointOf(req);
    const request = parseInput(UpdateWebhookEndpointRequest, req.body);
    const updated = await updateWebhookEndpoint(deps.prisma, row.id, {
      ...(request.url === undefined ? {} : { url: await vetUrl(request.url) }),
      ...(request.enabled_events === undefined ? {} : { enabledEvents: storedEnabledEvents(request.enabled_events) }),
      ...enablementChange(row, request.enabled),
    });
    res.json(webhookEndpointView(updated));
  });

  router.delete('/v1/webhook-endpoints/:id', async (req, res) => {
    const row = await endpointOf(req);
    await deleteWebhookEndpoint(deps.prisma, row.id, deps.clock.now());
    res.json({ id: row.id, object: 'webhook_endpoint', deleted: true });
  });

  // The secret is a credential (it forges deliveries), so a read-only key, made for reporting, cannot read it.
  router.get('/v1/webhook-endpoints/:id/secret', async (req, res) => {
    if (authOf(req).permission !== 'read_write') {
      throw new AppError('insufficient_scope', 'Reading a signing secret needs a read-write key.');
    }
    const row = await endpointOf(req);
    res.json({
      object: 'webhook_endpoint_secret',
      secret: deps.secretBox.open(row.secretEncrypted),
      previous_secret_expires_at: lastReplacedSecretExpiry(row, deps.clock.now())?.toISOString() ?? null,
    });
  });

  router.post('/v1/webhook-endpoints/:id/rotate-secret', async (req, res) => {
    const row = await endpointOf(req);
    parseInput(EmptyRequest, req.body);
    const secret = newSigningSecret();
    const now = deps.clock.now();
    const rotated = await rotateWebhookSecret(deps.prisma, row.id, deps.secretBox.seal(secret), now, previousSecretExpiry(now));
    if (rotated === null) {
      const possibleAt = nextRotationPossibleAt(row, now) ?? now;
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil((possibleAt.getTime() - now.getTime()) / 1000))));
      throw new AppError(
        'rate_limited',
        `This endpoint already has ${WEBHOOK_LIMITS.replacedSecretsMax} replaced secrets that still sign for their promised 24 hours; ` +
          `the next rotation is possible at ${possibleAt.toISOString()}.`,
      );
    }
    res.json({
      object: 'webhook_endpoint_secret',
      secret,
      previous_secret_expires_at: lastReplacedSecretExpiry(rotated, now)?.toISOString() ?? null,
    });
  });

  // A switched-off endpoint can be tested too: that is how a merchant checks a repair before
  // switching it back on.
  router.post('/v1/webhook-endpoints/:id/test', async (req, res) => {
    const row = await endpointOf(req);
    parseInput(EmptyRequest, req.body);
    const event = testEvent(authOf(req).mode, deps.clock.now());
    await requestFromDispatcher(deps.prisma, { type: 'webhook.send_test', endpoint_id: row.id, event });
    deps.onRecorded();
    res.status(202).json(event);
  });

  router.get('/v1/webhook-endpoints/:id/deliveries', async (req, res) => {
    const row = await endpointOf(req);
    const query = parseInput(DeliveryLogQuery, req.query, 'query');
    const page = await listDeliveryAttempts(deps.prisma, row.id, {
      limit: query.limit,
      ...(query.event_id === undefined ? {} : { eventId: query.event_id }),
      ...(query.starting_after === undefined
        ? {}
        : { beforeAttemptId: BigInt(query.starting_after.slice(DELIVERY_ATTEMPT_ID_PREFIX.length)) }),
    });
    res.json({ object: 'list', data: page.rows.map((r) => deliveryAttemptView(r, row)), has_more: page.hasMore });
  });

  router.post('/v1/webhook-endpoints/:id/deliveries/resend', async (req, res) => {
    const row = await endpointOf(req);
    const request = parseInput(ResendRequest, req.body);
    const event = await findEventInScope(deps.prisma, authOf(req), request.event_id);
    if (event === null) throw new AppError('resource_missing', `No such event: ${request.event_id}.`, { param: 'event_id' });
    if (!receivesEventType(row.enabledEvents, event.type as EventType)) {
      throw new AppError('parameter_invalid', `This endpoint does not receive ${event.type} events.`, { param: 'event_id' });
    }
    if (!row.enabled) {
      throw new AppError('parameter_invalid', 'This endpoint is switched off; switch it on (PATCH enabled: true) before resending.', {
        param: 'id',
      });
    }
    await requestFromDispatcher(deps.prisma, { type: 'webhook.resend', endpoint_id: row.id, event_id: event.id });
    deps.onRecorded();
    res.status(202).json({ object: 'webhook_resend', endpoint_id: row.id, event_id: event.id });
  });

  return router;
}
