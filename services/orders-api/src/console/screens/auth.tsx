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
    </Layout>
  );
}

export function SecondFactorScreen({ ctx, failed }: { ctx: ConsoleRequestContext; failed: boolean }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t.login.secondFactorTitle}>
      {failed ? <Notice kind="error">{t.login.codeWrong}</Notice> : <p>{t.login.secondFactorIntro}</p>}
      <form method="post" action="/dashboard/login/second-factor" class="stack panel">
        <input type="hidden" name="_csrf" value={ctx.signedIn?.csrfToken ?? ''} />
        <label>
          {t.login.code}
          <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required />
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
  if (email === null) {
    return (
      <Layout ctx={ctx} title={t.setup.title}>
        <Notice kind="error">{t.setup.invalid}</Notice>
      </Layout>
    );
  }
  return (
    <Layout ctx={ctx} title={t.setup.title}>
      <p>{t.setup.intro(email)}</p>
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <form method="post" action={ctx.path} class="stack panel">
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
