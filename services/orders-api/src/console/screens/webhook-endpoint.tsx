import { ALL_EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES, type WebhookDeliveryAttempt, type WebhookEndpoint } from '@pmatch/contracts';
import type { ShownOnce } from '../../use-cases/shown-once';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';
import { eventTypeWords } from '../words';
import { ConfirmScreen, PasswordAgainField } from '../components/confirm';
import { ActionButton, Badge, CopyableSecret, Facts, Field, Layout, Notice, Pager, PostForm, Table } from '../components/layout';

/** The event types an endpoint receives, as checkboxes (all of them when it takes every type). */
export function EventChoices({ ctx, selected }: { ctx: ConsoleRequestContext; selected: readonly string[] }) {
  const all = selected.includes(ALL_EVENT_TYPES);
  return (
    <fieldset>
      <legend>{ctx.t.webhooks.events}</legend>
      {SUBSCRIBABLE_EVENT_TYPES.map((type) => (
        <label class="checkbox">
          <input type="checkbox" name="events" value={type} checked={all || selected.includes(type)} /> {eventTypeWords(ctx, type)}{' '}
          <code class="muted">{type}</code>
        </label>
      ))}
    </fieldset>
  );
}

/** Whether an endpoint is on, failing since when, or switched off and why. */
export function EndpointState({ ctx, endpoint }: { ctx: ConsoleRequestContext; endpoint: WebhookEndpoint }) {
  const w = ctx.t.webhooks;
  if (!endpoint.enabled) {
    return (
      <Badge kind="off">
        {w.disabled}
        {endpoint.disabled_reason ? ` — ${w.disabledReasons[endpoint.disabled_reason] ?? endpoint.disabled_reason}` : ''}
      </Badge>
    );
  }
  return endpoint.failing_since ? (
    <Badge kind="failing">{`${w.failingSince}: ${tokyoTime(endpoint.failing_since)}`}</Badge>
  ) : (
    <Badge kind="on">{w.enabled}</Badge>
  );
}

const DONE_TEXT = (ctx: ConsoleRequestContext): Record<string, string> => {
  const w = ctx.t.webhooks;
  const params = new URLSearchParams(ctx.query);
  return {
    created: w.created,
    updated: ctx.t.common.done,
    enabled: ctx.t.common.done,
    disabled: ctx.t.common.done,
    tested: w.testSent(params.get('test_event') ?? ''),
    resent: w.resent(params.get('resent_event') ?? ''),
  };
};

/** One endpoint: its facts and switches, its events, its secret and its delivery log. */
export function EndpointScreen({
  ctx,
  endpoint,
  log,
  hasMore,
  eventId,
  secret,
  secretGone,
  problem,
}: {
  ctx: ConsoleRequestContext;
  endpoint: WebhookEndpoint;
  log: WebhookDeliveryAttempt[];
  hasMore: boolean;
  eventId: string | undefined;
  /** The secret kept to be shown once to this session, read by this very request. */
  secret: ShownOnce['webhook_secret'] | undefined;
  /** The page was asked for a secret already shown (a reload). */
  secretGone: boolean;
  problem: string | undefined;
}) {
  const { t } = ctx;
  const w = t.webhooks;
  const admin = ctx.signedIn!.actor.role === 'admin';
  const done = new URLSearchParams(ctx.query).get('done');
  const doneText = done === null ? undefined : DONE_TEXT(ctx)[done];
  return (
    <Layout ctx={ctx} title={w.detailTitle(endpoint.url)} section="webhooks">
      {doneText ? <Notice kind="success">{doneText}</Notice> : null}
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <section aria-labelledby="endpoint">
        <h2 id="endpoint">{w.title}</h2>
        <Facts
          rows={[
            [t.common.id, <code>{endpoint.id}</code>],
            [w.url, endpoint.url],
            [t.common.status, <EndpointState ctx={ctx} endpoint={endpoint} />],
            [t.common.created, tokyoTime(endpoint.created_at)],
          ]}
        />
        {admin ? (
          <div class="actions">
            <ActionButton
              ctx={ctx}
              action={`/dashboard/webhooks/${endpoint.id}`}
              hidden={{ enabled: endpoint.enabled ? 'false' : 'true' }}
              kind="secondary"
              label={endpoint.enabled ? w.disable : w.enable}
            />
            <ActionButton ctx={ctx} action={`/dashboard/webhooks/${endpoint.id}/test`} kind="secondary" label={w.sendTest} />
            <a href={`/dashboard/webhooks/${endpoint.id}/delete`} class="button danger">
              {w.delete}
            </a>
          </div>
        ) : null}
      </section>
      {admin ? (
        <section aria-labelledby="events-choice">
          <h2 id="events-choice">{w.events}</h2>
          <PostForm ctx={ctx} action={`/dashboard/webhooks/${endpoint.id}`} class="stack">
            <EventChoices ctx={ctx} selected={endpoint.enabled_events} />
            <div>
              <button type="submit">{w.update}</button>
            </div>
          </PostForm>
        </section>
      ) : null}
      {admin ? <SecretSection ctx={ctx} endpointId={endpoint.id} secret={secret} secretGone={secretGone} /> : null}
      <DeliveryLogSection ctx={ctx} endpointId={endpoint.id} log={log} hasMore={hasMore} eventId={eventId} admin={admin} />
    </Layout>
  );
}

/**
 * The signing secret: shown (password again) once by the page the form redirects to, or reissued
 * after a page that asks first. A reload of that page shows it no more.
 */
function SecretSection({
  ctx,
  endpointId,
  secret,
  secretGone,
}: {
  ctx: ConsoleRequestContext;
  endpointId: string;
  secret: ShownOnce['webhook_secret'] | undefined;
  secretGone: boolean;
}) {
  const w = ctx.t.webhooks;
  return (
    <section aria-labelledby="secret">
      <h2 id="secret">{w.secret}</h2>
      {secret ? (
        <>
          <Notice kind="success">{secret.rotated ? w.secretRotated : w.secretShown}</Notice>
          <CopyableSecret ctx={ctx} id="secret-text">
            {secret.secret}
          </CopyableSecret>
          {secret.previousSecretExpiresAt ? <p class="muted">{w.previousSecretUntil(tokyoTime(secret.previousSecretExpiresAt))}</p> : null}
        </>
      ) : secretGone ? (
        <Notice kind="info">{w.secretGone}</Notice>
      ) : null}
      <div class="actions">
        <PostForm ctx={ctx} action={`/dashboard/webhooks/${endpointId}/secret`} class="form-grid">
          <PasswordAgainField ctx={ctx} />
          <button type="submit" class="secondary">
            {w.revealSecret}
          </button>
        </PostForm>
        <a href={`/dashboard/webhooks/${endpointId}/rotate-secret`} class="button danger">
          {w.rotateSecret}
        </a>
      </div>
    </section>
  );
}

/** Asks before the signing secret is reissued, with the password typed again. */
export function RotateSecretScreen({ ctx, endpoint, problem }: { ctx: ConsoleRequestContext; endpoint: WebhookEndpoint; problem?: string | undefined }) {
  const w = ctx.t.webhooks;
  return (
    <ConfirmScreen
      ctx={ctx}
      section="webhooks"
      question={w.rotateQuestion(endpoint.url)}
      consequences={[w.rotateConsequences]}
      action={`/dashboard/webhooks/${endpoint.id}/rotate-secret`}
      button={w.rotateSecret}
      cancelHref={`/dashboard/webhooks/${endpoint.id}`}
      problem={problem}
    >
      <PasswordAgainField ctx={ctx} />
    </ConfirmScreen>
  );
}

/** Asks before an endpoint is deleted. */
export function DeleteEndpointScreen({ ctx, endpoint }: { ctx: ConsoleRequestContext; endpoint: WebhookEndpoint }) {
  const w = ctx.t.webhooks;
  return (
    <ConfirmScreen
      ctx={ctx}
      section="webhooks"
      question={w.deleteQuestion(endpoint.url)}
      consequences={[w.deleteConsequences, ctx.t.security.cannotUndo]}
      action={`/dashboard/webhooks/${endpoint.id}/delete`}
      button={w.delete}
      cancelHref={`/dashboard/webhooks/${endpoint.id}`}
    />
  );
}

/** The delivery log, newest first, found by event id, with a resend for admins. */
function DeliveryLogSection({
  ctx,
  endpointId,
  log,
  hasMore,
  eventId,
  admin,
}: {
  ctx: ConsoleRequestContext;
  endpointId: string;
  log: WebhookDeliveryAttempt[];
  hasMore: boolean;
  eventId: string | undefined;
  admin: boolean;
}) {
  const { t } = ctx;
  const w = t.webhooks;
  return (
    <section aria-labelledby="log">
      <h2 id="log">{w.log}</h2>
      <form method="get" action={`/dashboard/webhooks/${endpointId}`} class="form-grid" role="search">
        <Field label={w.searchEvent} name="event_id" value={eventId} />
        <button type="submit" class="secondary">
          {t.common.search}
        </button>
      </form>
      <Table
        ctx={ctx}
        caption={w.log}
        rows={log}
        columns={[
          { header: t.common.date, cell: (a) => tokyoTime(a.attempted_at) },
          {
            header: t.events.type,
            cell: (a) => (
              <>
                {eventTypeWords(ctx, a.event_type)} <code class="muted">{a.event_type}</code>
              </>
            ),
          },
          { header: t.common.id, cell: (a) => <a href={`/dashboard/events/${a.event_id}`}>{a.event_id}</a> },
          { header: w.attempt, class: 'num', cell: (a) => a.attempt },
          { header: w.statusCode, class: 'num', cell: (a) => a.status_code ?? a.error ?? '' },
          { header: w.duration, class: 'num', cell: (a) => `${a.duration_ms} ms` },
          { header: w.deliveryStatus, cell: (a) => <Badge kind={a.delivery_status}>{w.deliveryStatuses[a.delivery_status] ?? a.delivery_status}</Badge> },
          admin && {
            header: t.common.actions,
            cell: (a) => (
              <ActionButton
                ctx={ctx}
                action={`/dashboard/webhooks/${endpointId}/resend`}
                hidden={{ event_id: a.event_id }}
                kind="secondary"
                label={w.resend}
                ariaLabel={`${w.resend} ${a.event_id}`}
              />
            ),
          },
        ]}
      />
      <Pager ctx={ctx} next={hasMore ? { after: log.at(-1)!.id } : undefined} />
    </section>
  );
}
