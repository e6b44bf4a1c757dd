import { USER_ROLES } from '@pmatch/contracts';
import type { UserRow } from '@pmatch/db';
import { ConfirmScreen } from '../components/confirm';
import { CopyableSecret, Layout, Notice, PostForm, Table } from '../components/layout';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';

/** What a refused action on the team page says: a role change or removal (`problem`), or an invitation (with what was entered). */
export interface TeamProblems {
  problem?: string;
  inviteProblem?: string;
  entered?: { email: string; role: string | undefined };
}

/** The organisation's people; admins invite them (the link goes by e-mail), change their roles, reset their access and remove them. */
export function TeamScreen({ ctx, users, problem, inviteProblem, entered }: { ctx: ConsoleRequestContext; users: UserRow[] } & TeamProblems) {
  const { t } = ctx;
  const tm = t.team;
  const me = ctx.signedIn!.actor;
  const admin = me.role === 'admin';
  const params = new URLSearchParams(ctx.query);
  const done = params.get('done');
  const email = params.get('email') ?? '';
  const doneText =
    done === 'removed'
      ? tm.removed
      : done === 'changed'
        ? t.common.done
        : done === 'invited'
          ? tm.invited(email)
          : done === 'invited_again'
            ? tm.invitedAgain(email)
            : undefined;
  return (
    <Layout ctx={ctx} title={tm.title} section="team">
      {doneText ? <Notice kind="success">{doneText}</Notice> : null}
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <RolesExplained ctx={ctx} />
      <Table
        ctx={ctx}
        caption={tm.title}
        rows={users}
        columns={[
          { header: tm.email, cell: (user) => `${user.email} ${user.id === me.userId ? tm.you : ''}` },
          { header: tm.role, cell: (user) => t.roles[user.role] ?? user.role },
          { header: tm.passwordSet, cell: (user) => (user.passwordHash ? t.common.yes : user.activatedAt ? t.common.no : tm.pending) },
          { header: tm.totp, cell: (user) => (user.totpEnabledAt ? t.common.yes : t.common.no) },
          { header: t.common.created, cell: (user) => tokyoTime(user.createdAt) },
          admin && { header: t.common.actions, class: 'actions', cell: (user) => <MemberActions ctx={ctx} user={user} me={user.id === me.userId} /> },
        ]}
      />
      {admin ? <InviteForm ctx={ctx} problem={inviteProblem} entered={entered} /> : null}
    </Layout>
  );
}

/** What each role may do, where roles are chosen. */
function RolesExplained({ ctx }: { ctx: ConsoleRequestContext }) {
  const { t } = ctx;
  return (
    <details class="panel">
      <summary>{t.team.rolesTitle}</summary>
      <dl class="facts">
        {USER_ROLES.map((r) => (
          <>
            <dt>{t.roles[r]}</dt>
            <dd>{t.team.roleCan[r]}</dd>
          </>
        ))}
      </dl>
    </details>
  );
}

/** An admin's controls for one member: a new role, resetting their access (or inviting them again) and removal, each of the last two asked first. */
function MemberActions({ ctx, user, me }: { ctx: ConsoleRequestContext; user: UserRow; me: boolean }) {
  const { t } = ctx;
  const tm = t.team;
  const resetLabel = user.activatedAt ? tm.reset : tm.inviteAgain;
  return (
    <>
      <PostForm ctx={ctx} action={`/dashboard/team/${user.id}/role`} class="form-grid">
        <label>
          {tm.changeRole}
          <select name="role" aria-label={`${tm.changeRole}: ${user.email}`}>
            {USER_ROLES.map((r) => (
              <option value={r} selected={user.role === r}>
                {t.roles[r]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="secondary">
          {t.common.save}
        </button>
      </PostForm>
      {me ? null : (
        <a href={`/dashboard/team/${user.id}/reset`} class="button" aria-label={`${resetLabel}: ${user.email}`}>
          {resetLabel}
        </a>
      )}
      <a href={`/dashboard/team/${user.id}/remove`} class="button danger" aria-label={`${tm.remove}: ${user.email}`}>
        {tm.remove}
      </a>
    </>
  );
}

/** The invitation form (admins): an e-mail address and a role, viewer unless chosen otherwise. */
function InviteForm({ ctx, problem, entered }: { ctx: ConsoleRequestContext; problem: string | undefined; entered: TeamProblems['entered'] }) {
  const { t } = ctx;
  const tm = t.team;
  const role = entered?.role ?? 'viewer';
  return (
    <section aria-labelledby="invite">
      <h2 id="invite">{tm.invite}</h2>
      <p>{tm.inviteIntro}</p>
      {problem ? <Notice kind="error">{problem}</Notice> : null}
      <PostForm ctx={ctx} action="/dashboard/team" class="form-grid">
        <label>
          {tm.email}
          <input type="email" name="email" required value={entered?.email ?? ''} />
        </label>
        <label>
          {tm.role}
          <select name="role">
            {USER_ROLES.map((r) => (
              <option value={r} selected={r === role}>
                {t.roles[r]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">{tm.invite}</button>
      </PostForm>
    </section>
  );
}

/** Asks before a person is removed. */
export function RemoveMemberScreen({ ctx, user }: { ctx: ConsoleRequestContext; user: UserRow }) {
  const tm = ctx.t.team;
  return (
    <ConfirmScreen
      ctx={ctx}
      section="team"
      question={tm.removeQuestion(user.email)}
      consequences={[tm.removeConsequences, ctx.t.security.cannotUndo]}
      action={`/dashboard/team/${user.id}/remove`}
      button={tm.remove}
      cancelHref="/dashboard/team"
    />
  );
}

/** Asks before a person's access is reset (or, for someone who never set a password, before the invitation is sent again). */
export function ResetAccessScreen({ ctx, user }: { ctx: ConsoleRequestContext; user: UserRow }) {
  const tm = ctx.t.team;
  const active = user.activatedAt !== null;
  return (
    <ConfirmScreen
      ctx={ctx}
      section="team"
      question={active ? tm.resetQuestion(user.email) : tm.inviteAgainQuestion(user.email)}
      consequences={active ? tm.resetConsequences : [tm.inviteAgainConsequences]}
      action={`/dashboard/team/${user.id}/reset`}
      button={active ? tm.reset : tm.inviteAgain}
      cancelHref="/dashboard/team"
    />
  );
}

/** The new set-up link of a person whose access was reset, shown this once; `shown` undefined on a reload. */
export function ResetLinkScreen({ ctx, shown }: { ctx: ConsoleRequestContext; shown: { email: string; url: string; expiresAt: string } | undefined }) {
  const { t } = ctx;
  const tm = t.team;
  return (
    <Layout ctx={ctx} title={tm.resetLinkTitle} section="team">
      {shown === undefined ? (
        <Notice kind="info">{tm.resetLinkGone}</Notice>
      ) : (
        <>
          <Notice kind="success">{tm.resetLinkIntro(shown.email)}</Notice>
          <Notice kind="info">{tm.resetLinkShownOnce}</Notice>
          <CopyableSecret ctx={ctx} id="setup-url">
            {shown.url}
          </CopyableSecret>
        </>
      )}
      <p>
        <a href="/dashboard/team">{t.common.back}</a>
      </p>
    </Layout>
  );
}
