import { USER_ROLES } from '@pmatch/contracts';
import type { UserRow } from '@pmatch/db';
import { ActionButton, CopyableSecret, Layout, Notice, PostForm, Table } from '../components/layout';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';

/** The organisation's people; admins invite them (the new person's link shown once), change their roles and remove them. */
export function TeamScreen({ ctx, users, invited }: { ctx: ConsoleRequestContext; users: UserRow[]; invited?: string }) {
  const { t } = ctx;
  const tm = t.team;
  const me = ctx.signedIn!.actor;
  const admin = me.role === 'admin';
  const done = new URLSearchParams(ctx.query).get('done');
  return (
    <Layout ctx={ctx} title={tm.title} section="team">
      {done === 'removed' ? <Notice kind="success">{tm.removed}</Notice> : done === 'changed' ? <Notice kind="success">{t.common.done}</Notice> : null}
      {invited ? (
        <section aria-labelledby="invited">
          <h2 id="invited">{tm.invite}</h2>
          <p>{tm.invited}</p>
          <CopyableSecret ctx={ctx} id="setup-url">
            {invited}
          </CopyableSecret>
        </section>
      ) : null}
      <Table
        ctx={ctx}
        caption={tm.title}
        rows={users}
        columns={[
          { header: tm.email, cell: (user) => `${user.email} ${user.id === me.userId ? tm.you : ''}` },
          { header: tm.role, cell: (user) => t.roles[user.role] ?? user.role },
          { header: tm.passwordSet, cell: (user) => (user.passwordHash ? t.common.yes : tm.pending) },
          { header: tm.totp, cell: (user) => (user.totpEnabledAt ? t.common.yes : t.common.no) },
          { header: t.common.created, cell: (user) => tokyoTime(user.createdAt) },
          admin && { header: t.common.actions, class: 'actions', cell: (user) => <MemberActions ctx={ctx} user={user} /> },
        ]}
      />
      {admin ? <InviteForm ctx={ctx} /> : null}
    </Layout>
  );
}

/** An admin's controls for one member: a new role, or removal. */
function MemberActions({ ctx, user }: { ctx: ConsoleRequestContext; user: UserRow }) {
  const { t } = ctx;
  const tm = t.team;
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
      <ActionButton ctx={ctx} action={`/dashboard/team/${user.id}/remove`} kind="danger" label={tm.remove} ariaLabel={`${tm.remove}: ${user.email}`} />
    </>
  );
}

/** The invitation form (admins): an e-mail address and a role, viewer unless chosen otherwise. */
function InviteForm({ ctx }: { ctx: ConsoleRequestContext }) {
  const { t } = ctx;
  const tm = t.team;
  return (
    <section aria-labelledby="invite">
      <h2 id="invite">{tm.invite}</h2>
      <PostForm ctx={ctx} action="/dashboard/team" class="form-grid">
        <label>
          {tm.email}
          <input type="email" name="email" required />
        </label>
        <label>
          {tm.role}
          <select name="role">
            {USER_ROLES.map((r) => (
              <option value={r} selected={r === 'viewer'}>
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
