import type { ConsoleRequestContext } from '../request';
import { Layout, Notice } from '../components/layout';

export function LoginScreen({
  ctx,
  csrf,
  message,
  email,
}: {
  ctx: ConsoleRequestContext;
  csrf: string;
  message?: { kind: 'info' | 'error' | 'success'; text: string };
  email?: string;
}) {
  const { t } = ctx;
  // Whoever opens the log-in page is logging in anew: the page shows no session it may still have.
  return (
    <Layout ctx={{ ...ctx, signedIn: undefined }} title={t.login.title}>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <form method="post" action="/dashboard/login" class="stack panel">
        <input type="hidden" name="_csrf" value={csrf} />
        <label>
          {t.login.email}
          <input type="email" name="email" autoComplete="username" required value={email ?? ''} />
        </label>
        <label>
          {t.login.password}
          <input type="password" name="password" autoComplete="current-password" required />
        </label>
        <div>
          <button type="submit">{t.login.submit}</button>
        </div>
      </form>
      <p>
        <a href="/dashboard/password/forgot">{t.login.forgot}</a>
      </p>
    </Layout>
  );
}

/** The code asked of a log-in whose person has a second factor; `problem` says why the last one was refused. */
export function SecondFactorScreen({ ctx, problem }: { ctx: ConsoleRequestContext; problem?: string | undefined }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t.login.secondFactorTitle}>
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <p>{t.login.secondFactorIntro}</p>
      <form method="post" action="/dashboard/login/second-factor" class="stack panel">
        <input type="hidden" name="_csrf" value={ctx.signedIn?.csrfToken ?? ''} />
        <label>
          {t.login.code}
          <input name="code" autoComplete="one-time-code" spellcheck={false} maxLength={32} required />
        </label>
        <div>
          <button type="submit">{t.login.verify}</button>
        </div>
      </form>
    </Layout>
  );
}

export function SetupPasswordScreen({ ctx, email, csrf, problem }: { ctx: ConsoleRequestContext; email: string | null; csrf: string; problem?: string }) {
  const { t } = ctx;
  // No usable link (or an address no password can be set for here): what happened, and where to go.
  if (email === null) {
    return (
      <Layout ctx={ctx} title={t.setup.title}>
        <Notice kind="error">{problem ?? t.setup.invalid}</Notice>
        <p>
          <a href="/dashboard/password/forgot">{t.login.forgot}</a>
        </p>
      </Layout>
    );
  }
  return (
    <Layout ctx={ctx} title={t.setup.title}>
      <p>{t.setup.intro(email)}</p>
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <form method="post" action="/dashboard/setup-password" class="stack panel">
        <input type="hidden" name="_csrf" value={csrf} />
        <input type="email" name="email" value={email} autoComplete="username" hidden readOnly aria-hidden="true" tabIndex={-1} />
        <label>
          {t.setup.password}
          <input type="password" name="password" autoComplete="new-password" minLength={12} required />
        </label>
        <label>
          {t.setup.confirm}
          <input type="password" name="password_again" autoComplete="new-password" minLength={12} required />
        </label>
        <div>
          <button type="submit">{t.setup.submit}</button>
        </div>
      </form>
    </Layout>
  );
}

/** The log-in page's "forgot your password?": an address, and the same answer whether or not it has an account. */
export function ForgotPasswordScreen({
  ctx,
  csrf,
  message,
}: {
  ctx: ConsoleRequestContext;
  csrf: string;
  message?: { kind: 'success' | 'error'; text: string } | undefined;
}) {
  const { t } = ctx;
  return (
    <Layout ctx={{ ...ctx, signedIn: undefined }} title={t.forgot.title}>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <p>{t.forgot.intro}</p>
      <form method="post" action="/dashboard/password/forgot" class="stack panel">
        <input type="hidden" name="_csrf" value={csrf} />
        <label>
          {t.login.email}
          <input type="email" name="email" autoComplete="username" required />
        </label>
        <div>
          <button type="submit">{t.forgot.submit}</button>
        </div>
      </form>
      <p>
        <a href="/dashboard/login">{t.login.title}</a>
      </p>
    </Layout>
  );
}

export function ErrorScreen({ ctx, message, detail }: { ctx: ConsoleRequestContext; message: string; detail?: string }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t.errors.title}>
      <Notice kind="error">{message}</Notice>
      {detail ? (
        <p class="muted">
          {t.errors.details}: {detail}
        </p>
      ) : null}
      <p>
        <a href="/dashboard/">{t.nav.overview}</a>
      </p>
    </Layout>
  );
}
