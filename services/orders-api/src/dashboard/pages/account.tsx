import type { UserRow } from '@pmatch/db';
import { Router, type Request } from 'express';
import { deleteOtherSessions } from '../../data/console-sessions';
import { enableTotp, findUserOfOrganisation, setTotpSecret } from '../../data/users';
import { acceptedStep, newTotpSecret, totpUri } from '../../domain/totp';
import { recordAudit } from '../../use-cases/audit';
import { passwordConfirmed } from '../../use-cases/console-reauthenticate';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { auditContextOf, contextOf, field, signedInOf, type ConsoleRequestContext } from '../http';
import { redirectDone, sendPage } from '../render';
import { Layout, Notice, PostForm } from '../views/layout';

/** The person's own second factor: set up (secret, then a code to prove it), or turned off with the password. */
export function accountPages(deps: OrdersApiDeps): Router {
  const router = Router();
  const me = async (req: Request) => {
    const { actor } = signedInOf(req);
    return (await findUserOfOrganisation(deps.database.prisma, actor.organisationId, actor.userId))!;
  };

  router.get('/dashboard/account', async (req, res) => {
    sendPage(res, <AccountPage ctx={contextOf(req)} user={await me(req)} />);
  });

  router.post('/dashboard/account/totp/start', async (req, res) => {
    const user = await me(req);
    if (user.totpEnabledAt !== null) return res.redirect(303, '/dashboard/account');
    const secret = newTotpSecret();
    await setTotpSecret(deps.database.prisma, user.id, deps.secretBox.seal(secret, { kind: 'user_totp', id: user.id }), deps.clock.now());
    sendPage(res, <AccountPage ctx={contextOf(req)} user={user} enrolling={{ secret, uri: totpUri(secret, user.email) }} />);
  });

  router.post('/dashboard/account/totp/confirm', async (req, res) => {
    const ctx = contextOf(req);
    const user = await me(req);
    if (user.totpSecretEncrypted === null || user.totpEnabledAt !== null) return res.redirect(303, '/dashboard/account');
    const secret = deps.secretBox.open(user.totpSecretEncrypted, { kind: 'user_totp', id: user.id });
    const step = acceptedStep(secret, (field(req, 'code') ?? '').trim(), deps.clock.now(), user.totpLastStep);
    if (step === undefined) {
      return sendPage(res, <AccountPage ctx={ctx} user={user} enrolling={{ secret, uri: totpUri(secret, user.email) }} problem={ctx.t.login.codeWrong} />, 400);
    }
    await enableTotp(deps.database.prisma, user.id, step, deps.clock.now());
    await deleteOtherSessions(deps.database.prisma, user.id, signedInOf(req).token);
    await recordAudit(deps, { ...auditContextOf(req), mode: null }, 'user.totp_enable', user.id, {});
    redirectDone(res, '/dashboard/account', 'enabled');
  });

  router.post('/dashboard/account/totp/disable', async (req, res) => {
    const ctx = contextOf(req);
    const user = await me(req);
    if (!(await passwordConfirmed(deps, signedInOf(req).actor, field(req, 'password') ?? ''))) {
      return sendPage(res, <AccountPage ctx={ctx} user={user} problem={ctx.t.webhooks.wrongPassword} />, 403);
    }
    await setTotpSecret(deps.database.prisma, user.id, null, deps.clock.now());
    await recordAudit(deps, { ...auditContextOf(req), mode: null }, 'user.totp_disable', user.id, {});
    redirectDone(res, '/dashboard/account', 'disabled');
  });

  return router;
}

function AccountPage({
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
