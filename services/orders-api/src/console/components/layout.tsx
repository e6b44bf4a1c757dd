import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { ConsoleRequestContext } from '../request';
import { LANGUAGES } from '../texts';

/** Renders a page as a whole document. Every value in it went through Preact, which escapes text and attributes. */
export function documentOf(page: ComponentChildren): string {
  return `<!doctype html>${renderToString(<>{page}</>)}`;
}

interface LayoutProps {
  ctx: ConsoleRequestContext;
  title: string;
  /** Which navigation entry is this page's. */
  section?: string;
  children: ComponentChildren;
}

const NAV: { key: keyof ConsoleRequestContext['t']['nav']; href: string; adminOnly?: boolean }[] = [
  { key: 'overview', href: '/dashboard/' },
  { key: 'deposits', href: '/dashboard/deposits' },
  { key: 'orders', href: '/dashboard/orders' },
  { key: 'events', href: '/dashboard/events' },
  { key: 'webhooks', href: '/dashboard/webhooks' },
  { key: 'apiKeys', href: '/dashboard/api-keys' },
  { key: 'settings', href: '/dashboard/settings' },
  { key: 'team', href: '/dashboard/team' },
  { key: 'audit', href: '/dashboard/audit', adminOnly: true },
  { key: 'account', href: '/dashboard/account' },
];

/** The frame of every console page: skip link, test banner, navigation, mode and language switches. */
export function Layout({ ctx, title, section, children }: LayoutProps) {
  const { t, signedIn, language } = ctx;
  return (
    <html lang={language}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{`${title} — ${t.appName}`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/dashboard/assets/console.css" />
        <script src="/dashboard/assets/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          {t.skipToContent}
        </a>
        <PageHeader ctx={ctx} />
        {signedIn && !signedIn.session.secondFactorPending ? (
          <nav aria-label={t.mainNav} class="main-nav">
            <ul>
              {NAV.filter((n) => n.adminOnly !== true || signedIn.actor.role === 'admin').map((n) => (
                <li>
                  <a href={n.href} aria-current={section === n.key ? 'page' : undefined}>
                    {t.nav[n.key]}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        <main id="main" tabIndex={-1}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** The page's banner landmark: the test banner, the organisation, the mode and language switches, log-out. */
function PageHeader({ ctx }: { ctx: ConsoleRequestContext }) {
  const { t, signedIn, language } = ctx;
  const other = LANGUAGES.find((l) => l !== language)!;
  const separator = ctx.query === '' ? '?' : '&';
  return (
    <header>
      {signedIn?.mode === 'test' ? (
        <p class="test-banner" role="note">
          {t.testBanner}
        </p>
      ) : null}
      <div class="top">
        <p class="brand">
          {t.appName}
          {signedIn ? <span class="org"> — {signedIn.organisationName}</span> : null}
        </p>
        <div class="top-tools">
          {signedIn && !signedIn.session.secondFactorPending ? (
            <>
              <form method="post" action="/dashboard/mode" class="inline">
                <input type="hidden" name="_csrf" value={signedIn.csrfToken} />
                <input type="hidden" name="mode" value={signedIn.mode === 'test' ? 'live' : 'test'} />
                <span class={`mode mode-${signedIn.mode}`}>
                  {t.modeLabel}: {t.modes[signedIn.mode]}
                </span>{' '}
                <button type="submit" class="link-button">
                  {t.switchTo(t.modes[signedIn.mode === 'test' ? 'live' : 'test']!)}
                </button>
              </form>
              <span class="who">{t.signedInAs(signedIn.user.email, t.roles[signedIn.user.role] ?? signedIn.user.role)}</span>
            </>
          ) : null}
          <a href={`${ctx.path}${ctx.query}${separator}lang=${other}`} hrefLang={other} lang={other}>
            {other === 'ja' ? '日本語' : 'English'}
          </a>
          {signedIn ? (
            <form method="post" action="/dashboard/logout" class="inline">
              <input type="hidden" name="_csrf" value={signedIn.csrfToken} />
              <button type="submit" class="link-button">
                {t.logout}
              </button>
            </form>
          ) : null}
        </div>
      </div>
    </header>
  );
}

/** A POST form carrying the session's CSRF token. */
export function PostForm(props: { ctx: ConsoleRequestContext; action: string; class?: string; children: ComponentChildren }) {
  return (
    <form method="post" action={props.action} class={props.class}>
      <input type="hidden" name="_csrf" value={props.ctx.signedIn?.csrfToken ?? ''} />
      {props.children}
    </form>
  );
}

/**
 * A message on the page. The result of an action (by default a success or an error: what a
 * post/redirect/get or a refused form comes back to) takes the focus when the page opens, so the
 * keyboard and a screen reader start from it rather than from the top of the page (decision 0184).
 */
export function Notice({
  kind = 'info',
  result = kind !== 'info',
  children,
}: {
  kind?: 'info' | 'error' | 'success';
  result?: boolean;
  children: ComponentChildren;
}) {
  return (
    <p
      class={`notice notice-${kind}`}
      role={kind === 'error' ? 'alert' : 'status'}
      tabIndex={result ? -1 : undefined}
      data-result={result ? '' : undefined}
      autofocus={result ? true : undefined}
    >
      {children}
    </p>
  );
}

/** A secret shown once, with a copy button (the page's script shows the button). */
export function CopyableSecret({ ctx, id, children }: { ctx: ConsoleRequestContext; id: string; children: ComponentChildren }) {
  return (
    <p>
      <code class="secret" id={id}>
        {children}
      </code>{' '}
      <button type="button" class="secondary" data-copy={id} data-copied={ctx.t.common.copied} hidden>
        {ctx.t.common.copy}
      </button>
    </p>
  );
}

/** A link to the next page of a list, keeping its filters. */
export function Pager({ ctx, next }: { ctx: ConsoleRequestContext; next: Record<string, string> | undefined }) {
  const params = new URLSearchParams(ctx.query);
  const hasCursor = [...params.keys()].some((k) => k.startsWith('after'));
  if (next === undefined && !hasCursor) return null;
  const first = new URLSearchParams(params);
  for (const key of [...first.keys()]) if (key.startsWith('after')) first.delete(key);
  const following = new URLSearchParams(first);
  for (const [k, v] of Object.entries(next ?? {})) following.set(k, v);
  return (
    <nav aria-label={ctx.t.common.pagination} class="pager">
      {hasCursor ? <a href={`${ctx.path}?${first}`}>{ctx.t.common.previous}</a> : null}
      {next !== undefined ? <a href={`${ctx.path}?${following}`}>{ctx.t.common.next}</a> : null}
    </nav>
  );
}

export function Badge({ kind, children }: { kind: string; children: ComponentChildren }) {
  return <span class={`badge badge-${kind}`}>{children}</span>;
}

/** A definition list of label/value pairs. */
export function Facts({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {rows.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}

/** A labelled input; the label wraps the input, so it names the control. */
export function Field(props: { label: ComponentChildren; name: string; value?: string | undefined; type?: 'date'; inputMode?: 'numeric' }) {
  return (
    <label>
      {props.label}
      {props.type === 'date' ? (
        <input type="date" name={props.name} value={props.value ?? ''} />
      ) : (
        <input name={props.name} inputMode={props.inputMode} value={props.value ?? ''} />
      )}
    </label>
  );
}

/** One column of a `Table`: its header and how a row fills its cell; `num` right-aligns figures. */
export interface Column<Row> {
  header: ComponentChildren;
  cell: (row: Row) => ComponentChildren;
  class?: 'num' | 'actions';
}

/**
 * A wide table's own scrolling box: on a narrow screen the table scrolls inside it, never the page;
 * it is a labelled region the keyboard can reach, so it can be scrolled without a mouse.
 */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/**
 * A captioned table of rows, or `empty` (by default "none") when there are no rows. Columns given
 * as `false` are left out, so a column only some roles see is written `admin && {…}`.
 */
export function Table<Row>(props: {
  ctx: ConsoleRequestContext;
  caption: string | undefined;
  rows: Row[];
  columns: (Column<Row> | false)[];
  empty?: ComponentChildren;
}) {
  if (props.rows.length === 0) return props.empty === null ? null : <p>{props.empty ?? props.ctx.t.common.none}</p>;
  const columns = props.columns.filter((c): c is Column<Row> => c !== false);
  return (
    <TableBox label={props.ctx.t.common.table(props.caption)}>
      <table>
        {props.caption === undefined ? null : <caption>{props.caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" class={c.class === 'num' ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr>
              {columns.map((c) => (
                <td class={c.class}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

/** A form of one button that POSTs to `action` (with the CSRF token and any hidden fields). */
export function ActionButton(props: {
  ctx: ConsoleRequestContext;
  action: string;
  label: string;
  /** The accessible name where the visible label alone would be ambiguous in a list. */
  ariaLabel?: string;
  kind?: 'secondary' | 'danger';
  hidden?: Record<string, string>;
}) {
  return (
    <PostForm ctx={props.ctx} action={props.action}>
      {Object.entries(props.hidden ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.kind} aria-label={props.ariaLabel}>
        {props.label}
      </button>
    </PostForm>
  );
}
