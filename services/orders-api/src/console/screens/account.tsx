import type { UserRow } from '@pmatch/db';
import { CodeAgainField, PasswordAgainField } from '../components/confirm';
import { Layout, Notice, PostForm } from '../components/layout';
import { numberText } from '../format';
import type { ConsoleRequestContext } from '../request';

/**
 * The person's own second factor: set up (password again, then a QR code or its key, then a code to
 * prove it), or, once on, turned off or its recovery codes replaced with a code again.
 */
export function AccountScreen({
  ctx,
  user,
  enrolling,
  recoveryCodesLeft,
  problem,
}: {
  ctx: ConsoleRequestContext;
  user: UserRow;
  enrolling?: { secret: string; uri: string; qr: string } | undefined;
  recoveryCodesLeft: number;
  problem?: string | undefined;
}) {
  const { t, language } = ctx;
  const a = t.account;
  const done = new URLSearchParams(ctx.query).get('done');
  return (
    <Layout ctx={ctx} title={a.title} section="account">
      {done === 'disabled' ? <Notice kind="success">{a.disabled}</Notice> : null}
      {ctx.signedIn!.owesSecondFactorSetup ? (
        <Notice kind="error" result={false}>
          {a.totpRequired}
        </Notice>
      ) : null}
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <section aria-labelledby="totp">
        <h2 id="totp">{a.totp}</h2>
        <p>{user.totpEnabledAt ? a.totpOn : a.totpOff}</p>
        {user.totpEnabledAt ? (
          <>
            <p>{a.disableIntro}</p>
            <PostForm ctx={ctx} action="/dashboard/account/totp/disable" class="form-grid">
              <CodeAgainField ctx={ctx} />
              <button type="submit" class="danger">
                {a.disable}
              </button>
            </PostForm>
          </>
        ) : enrolling ? (
          <Enrolment ctx={ctx} enrolling={enrolling} />
        ) : (
          <>
            <p>{a.startIntro}</p>
            <PostForm ctx={ctx} action="/dashboard/account/totp/start" class="form-grid">
              <PasswordAgainField ctx={ctx} />
              <button type="submit">{a.start}</button>
            </PostForm>
          </>
        )}
      </section>
      {user.totpEnabledAt ? (
        <section aria-labelledby="recovery">
          <h2 id="recovery">{a.recoveryTitle}</h2>
          <p>{a.recoveryLeft(numberText(recoveryCodesLeft, language))}</p>
          <p>{a.recoveryNewIntro}</p>
          <PostForm ctx={ctx} action="/dashboard/account/recovery-codes" class="form-grid">
            <CodeAgainField ctx={ctx} />
            <button type="submit" class="secondary">
              {a.recoveryNew}
            </button>
          </PostForm>
        </section>
      ) : null}
    </Layout>
  );
}

/** A second factor being set up: its QR code (drawn on the server), its key to type instead, and the code that proves it. */
function Enrolment({ ctx, enrolling }: { ctx: ConsoleRequestContext; enrolling: { secret: string; uri: string; qr: string } }) {
  const a = ctx.t.account;
  return (
    <>
      <p>{a.secretIntro}</p>
      <p>
        <img class="qr" src={enrolling.qr} alt={a.qrAlt} width={200} height={200} />
      </p>
      <p>
        {a.secretKey}:{' '}
        <code class="secret" id="totp-secret">
          {enrolling.secret}
        </code>
      </p>
      <p class="muted">
        {a.uri}: <code class="wrap">{enrolling.uri}</code>
      </p>
      <PostForm ctx={ctx} action="/dashboard/account/totp/confirm" class="form-grid">
        <label>
          {a.enrolCode}
          <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required />
        </label>
        <button type="submit">{a.confirm}</button>
      </PostForm>
    </>
  );
}

/** New recovery codes, shown this once; `shown` undefined when they were shown already. */
export function RecoveryCodesScreen({ ctx, shown }: { ctx: ConsoleRequestContext; shown: { codes: string[]; secondFactorTurnedOn: boolean } | undefined }) {
  const { t } = ctx;
  const a = t.account;
  const codes = shown?.codes;
  return (
    <Layout ctx={ctx} title={a.recoveryTitle} section="account">
      {codes === undefined ? (
        <Notice kind="info">{a.recoveryGone}</Notice>
      ) : (
        <>
          {shown?.secondFactorTurnedOn ? <Notice kind="success">{a.enabled}</Notice> : null}
          <p>{a.recoveryIntro}</p>
          <Notice kind="info">{a.recoveryShownOnce}</Notice>
          <ol class="codes" id="recovery-codes">
            {codes.map((code) => (
              <li>
                <code>{code}</code>
              </li>
            ))}
          </ol>
        </>
      )}
      <p>
        <a href="/dashboard/account">{codes === undefined ? t.common.back : a.recoveryDone}</a>
      </p>
    </Layout>
  );
}
