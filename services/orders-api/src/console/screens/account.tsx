import type { UserRow } from '@pmatch/db';
import { Layout, Notice, PostForm } from '../components/layout';
import type { ConsoleRequestContext } from '../request';

/** The person's own second factor: set up (secret, then a code to prove it), or turned off with the password. */
export function AccountScreen({
  ctx,
  user,
  enrolling,
  problem,
}: {
  ctx: ConsoleRequestContext;
  user: UserRow;
  enrolling?: { secret: string; uri: string };
  problem?: string;
}) {
  const { t } = ctx;
  const a = t.account;
  const done = new URLSearchParams(ctx.query).get('done');
  return (
    <Layout ctx={ctx} title={a.title} section="account">
      {done === 'enabled' ? <Notice kind="success">{a.enabled}</Notice> : done === 'disabled' ? <Notice kind="success">{a.disabled}</Notice> : null}
      {ctx.signedIn!.owesSecondFactorSetup ? <Notice kind="error">{a.totpRequired}</Notice> : null}
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <section aria-labelledby="totp">
        <h2 id="totp">{a.totp}</h2>
        <p>{user.totpEnabledAt ? a.totpOn : a.totpOff}</p>
        {user.totpEnabledAt ? (
          <PostForm ctx={ctx} action="/dashboard/account/totp/disable" class="form-grid">
            <label>
              {t.webhooks.passwordAgain}
              <input type="password" name="password" autoComplete="current-password" required />
            </label>
            <button type="submit" class="danger">
              {a.disable}
            </button>
          </PostForm>
        ) : enrolling ? (
          <>
            <p>{a.secretIntro}</p>
            <p>
              {a.secretKey}:{' '}
              <code class="secret" id="totp-secret">
                {enrolling.secret}
              </code>
            </p>
            <p class="muted">
              {a.uri}: <code>{enrolling.uri}</code>
            </p>
            <PostForm ctx={ctx} action="/dashboard/account/totp/confirm" class="form-grid">
              <label>
                {t.login.code}
                <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required />
              </label>
              <button type="submit">{a.confirm}</button>
            </PostForm>
          </>
        ) : (
          <PostForm ctx={ctx} action="/dashboard/account/totp/start">
            <button type="submit">{a.start}</button>
          </PostForm>
        )}
      </section>
    </Layout>
  );
}
