import { ALL_EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES, type WebhookDeliveryAttempt, type WebhookEndpoint } from '@pmatch/contracts';
import type { TestSendRow } from '../../use-cases/webhook-deliveries';
import type { ShownOnce } from '../../use-cases/shown-once';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';
import { eventTypeWords } from '../words';
import { ConfirmScreen, PasswordAgainField } from '../components/confirm';
import { ActionButton, Badge, CopyableSecret, Facts, Field, Layout, Notice, Pager, PostForm, Table, type Column } from '../components/layout';

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
  testSends,
  hasMore,
  eventId,
  secret,
  secretGone,
  problem,
}: {
  ctx: ConsoleRequestContext;
  endpoint: WebhookEndpoint;
  log: WebhookDeliveryAttempt[];
  /** Test events sent, newest first: shown in the log among the attempts. */
  testSends: TestSendRow[];
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
      <DeliveryLogSection ctx={ctx} endpointId={endpoint.id} log={log} testSends={testSends} hasMore={hasMore} eventId={eventId} admin={admin} />
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

/** A test event counts as received on a 2xx answer, as a delivery does. */
function testSucceeded(test: TestSendRow): boolean {
  return test.statusCode !== null && test.statusCode >= 200 && test.statusCode < 300;
}

/** A row of the delivery log: an attempt to deliver a recorded event, or a test event sent. */
type LogRow = { at: Date; attempt: WebhookDeliveryAttempt; test?: undefined } | { at: Date; test: TestSendRow; attempt?: undefined };

/**
 * The attempts and the test sends, newest first. Test sends older than a full page's last attempt
 * belong to a later page of attempts, and are left out.
 */
function logRows(log: WebhookDeliveryAttempt[], testSends: TestSendRow[], hasMore: boolean): LogRow[] {
  const oldest = hasMore && log.length > 0 ? Date.parse(log.at(-1)!.attempted_at) : -Infinity;
  return [
    ...log.map((attempt): LogRow => ({ at: new Date(attempt.attempted_at), attempt })),
    ...testSends.filter((test) => test.sentAt.getTime() >= oldest).map((test): LogRow => ({ at: test.sentAt, test })),
  ].sort((a, b) => b.at.getTime() - a.at.getTime());
}

/** The delivery log, newest first, found by event id, with a resend for admins; test events sent are among it, never resent. */
function DeliveryLogSection({
  ctx,
  endpointId,
  log,
  testSends,
  hasMore,
  eventId,
  admin,
}: {
  ctx: ConsoleRequestContext;
  endpointId: string;
  log: WebhookDeliveryAttempt[];
  testSends: TestSendRow[];
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
      <Table ctx={ctx} caption={w.log} rows={logRows(log, testSends, hasMore)} columns={deliveryLogColumns(ctx, endpointId, admin)} />
      <Pager ctx={ctx} next={hasMore ? { after: log.at(-1)!.id } : undefined} />
    </section>
  );
}

/** The delivery log's columns: a test send's are filled from its own record, and it has no resend. */
function deliveryLogColumns(ctx: ConsoleRequestContext, endpointId: string, admin: boolean): (Column<LogRow> | false)[] {
  const { t } = ctx;
  const w = t.webhooks;
  return [
    { header: t.common.date, cell: (r) => tokyoTime(r.at) },
    {
      header: t.events.type,
      cell: (r) => {
        const type = r.test ? 'webhook.test' : r.attempt.event_type;
        return (
          <>
            {eventTypeWords(ctx, type)} <code class="muted">{type}</code>
          </>
        );
      },
    },
    {
      header: t.common.id,
      cell: (r) => (r.test ? <code>{r.test.eventId}</code> : <a href={`/dashboard/events/${r.attempt.event_id}`}>{r.attempt.event_id}</a>),
    },
    { header: w.attempt, class: 'num', cell: (r) => (r.test ? 1 : r.attempt.attempt) },
    {
      header: w.statusCode,
      class: 'num',
      cell: (r) => (r.test ? (r.test.statusCode ?? r.test.error ?? '') : (r.attempt.status_code ?? r.attempt.error ?? '')),
    },
    { header: w.duration, class: 'num', cell: (r) => `${r.test ? r.test.durationMs : r.attempt.duration_ms} ms` },
    {
      header: w.deliveryStatus,
      cell: (r) =>
        r.test ? (
          <Badge kind={testSucceeded(r.test) ? 'succeeded' : 'failed'}>{w.testSend(testSucceeded(r.test))}</Badge>
        ) : (
          <Badge kind={r.attempt.delivery_status}>{w.deliveryStatuses[r.attempt.delivery_status] ?? r.attempt.delivery_status}</Badge>
        ),
    },
    admin && {
      header: t.common.actions,
      cell: (r) =>
        r.test ? null : (
          <ActionButton
            ctx={ctx}
            action={`/dashboard/webhooks/${endpointId}/resend`}
            hidden={{ event_id: r.attempt.event_id }}
            kind="secondary"
            label={w.resend}
            ariaLabel={`${w.resend} ${r.attempt.event_id}`}
          />
        ),
    },
  ];
}
